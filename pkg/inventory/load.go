package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// The raw* types mirror the file (SPEC §4). Pointers and nil slices mean
// "not set", so that defaults can be told apart from written values.
type rawInventory struct {
	Name     string       `yaml:"name"`
	RoCE     *rawRoCE     `yaml:"roce"`
	Switches []rawSwitch  `yaml:"switches"`
	VCenter  string       `yaml:"vcenter"`
	Docker   *rawDocker   `yaml:"docker"`
	Horovod  *rawHorovod  `yaml:"horovod"`
	Defaults *rawHostBase `yaml:"defaults"`
	Hosts    []rawHost    `yaml:"hosts"`
}

type rawRoCE struct {
	DSCP          *int     `yaml:"dscp"`
	Priority      *int     `yaml:"priority"`
	CNPDSCP       *int     `yaml:"cnp_dscp"`
	CNPPriority   *int     `yaml:"cnp_priority"`
	ECNMinKB      *int     `yaml:"ecn_min_kb"`
	ECNMaxKB      *int     `yaml:"ecn_max_kb"`
	BufferPercent *float64 `yaml:"buffer_percent"`
}

type rawSwitch struct {
	Name  string   `yaml:"name"`
	Model string   `yaml:"model"`
	ONYX  *Version `yaml:"onyx"`
	Mgmt  string   `yaml:"mgmt"`
}

type rawDocker struct {
	Version *Version `yaml:"version"`
	Pool    *string  `yaml:"pool"`
	Prefix  *int     `yaml:"prefix"`
	MTU     *int     `yaml:"mtu"`
	DNS     []string `yaml:"dns"`
}

type rawHorovod struct {
	Network *string `yaml:"network"`
	SSHPort *int    `yaml:"ssh_port"`
	Image   *string `yaml:"image"`
	HCA     *string `yaml:"hca"`
}

// rawHostBase holds the keys a host inherits from defaults.
type rawHostBase struct {
	OS            *string  `yaml:"os"`
	DataInterface *string  `yaml:"data_interface"`
	DataMTU       *int     `yaml:"data_mtu"`
	GPUs          []rawGPU `yaml:"gpus"`
	NIC           *rawNIC  `yaml:"nic"`
}

type rawGPU struct {
	Model    string `yaml:"model"`
	MemoryGB *int   `yaml:"memory_gb"`
	BAR1GB   *int   `yaml:"bar1_gb"`
	PCI      string `yaml:"pci"`
}

type rawNIC struct {
	Model     string  `yaml:"model"`
	PF        string  `yaml:"pf"`
	VFs       *int    `yaml:"vfs"`
	PortGroup *string `yaml:"portgroup"`
}

type rawHost struct {
	Name        string `yaml:"name"`
	ESXi        string `yaml:"esxi"`
	VM          string `yaml:"vm"`
	Mgmt        string `yaml:"mgmt"`
	rawHostBase `yaml:",inline"`
	Data        *rawData       `yaml:"data"`
	Docker      *rawHostDocker `yaml:"docker"`
}

type rawData struct {
	Address string `yaml:"address"`
	Switch  string `yaml:"switch"`
	Port    string `yaml:"port"`
}

type rawHostDocker struct {
	Subnet string `yaml:"subnet"`
}

// LoadFile reads and loads the inventory at path; see Load.
func LoadFile(path string) (*Inventory, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, src)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Load decodes src (named name in findings) strictly, fills defaults, derives
// values and checks every rule of SPEC §4. It returns the inventory, or a
// *Report with every finding when anything is wrong; nothing else is returned
// as an error.
func Load(name string, src []byte) (*Inventory, error) {
	rep := &Report{}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		f := Finding{File: name, Rule: "not valid YAML: " + err.Error()}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			f.Pos, f.Rule = Pos{line, 1}, "not valid YAML: "+m[2]
		}
		rep.Findings = append(rep.Findings, f)
		return nil, rep
	}
	if second := (yaml.Node{}); dec.Decode(&second) == nil {
		rep.Findings = append(rep.Findings, Finding{File: name, Pos: Pos{max(second.Line, 1), 1},
			Rule: "a second YAML document starts here; an inventory is one document (remove the '---' and what follows, or merge it)"})
	}
	if len(bytes.TrimSpace(src)) == 0 || len(root.Content) == 0 {
		rep.Findings = append(rep.Findings, Finding{File: name, Rule: "the file is empty; `rdggen example` prints a starting point"})
		return nil, rep
	}
	d := &decoder{file: name, pos: positions{}, rep: rep}
	var raw rawInventory
	d.decode(root.Content[0], reflect.ValueOf(&raw).Elem(), "")
	inv := &Inventory{File: name, pos: d.pos}
	c := &checker{inv: inv, rep: rep}
	c.build(&raw)
	if len(rep.Findings) > 0 {
		rep.sort()
		return nil, rep
	}
	return inv, nil
}

// must is a helper for the embedded inventory.
func must(inv *Inventory, err error) *Inventory {
	if err != nil {
		panic(fmt.Sprintf("inventory: embedded reference does not load:\n%v", err))
	}
	return inv
}
