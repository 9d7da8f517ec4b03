package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// The property behind "inventory text never becomes code": whatever string
// an inventory field holds, either validation refuses it with a finding, or
// every generated file has exactly the shape its template gives it — the
// same shell commands (parsed by a real shell parser, mvdan.cc/sh), the same
// VMX keys, the same switch commands, the same JSON, YAML and unit keys, the
// same number of lines — as the file generated from a twin inventory whose
// strings are plain placeholders.

// fields are the inventory's strings that reach generated files (and the
// inventory's path, from the command line), each with the plain value the
// twin inventory holds. The rest of the template is fixed.
var fields = []struct{ key, plain string }{
	{"file", "fuzz.yaml"},                 // the inventory's path
	{"name", "fz"},                        // cluster name
	{"host", "node1"},                     // host name
	{"esxi", "esx1.example"},              // ESXi host
	{"vm", "vm1"},                         // VM name
	{"model", "V100-PCIE-16GB"},           // GPU model
	{"portgroup", "RoCE Net"},             // port group of the SR-IOV adapter
	{"image", "horovod/horovod:0.16.0"},   // worker image
	{"iface", "ens224"},                   // data interface
	{"hca", "mlx5_0"},                     // RDMA device
	{"mgmt", "node1.mgmt"},                // where apply connects
	{"pci", "0000:3b:00.0"},               // GPU PCI address
	{"vcenter", "https://vc.example/sdk"}, // vCenter URL
	{"dns", "8.8.8.8"},                    // container DNS
	{"switch", "sw1"},                     // switch name
}

const fuzzTemplate = `name: {{name}}
vcenter: {{vcenter}}
switches: [{name: {{switch}}, model: SN2700, onyx: 3.6.8190, mgmt: 10.9.0.2}]
docker: {version: "20.10", dns: [{{dns}}]}
horovod: {image: {{image}}, hca: {{hca}}}
hosts:
  - name: {{host}}
    esxi: {{esxi}}
    vm: {{vm}}
    mgmt: {{mgmt}}
    os: ubuntu-20.04
    data_interface: {{iface}}
    gpus: [{model: {{model}}, memory_gb: 16, pci: {{pci}}}]
    nic: {model: ConnectX-5, pf: vmnic4, vfs: 8, portgroup: {{portgroup}}}
    data: {address: 10.0.0.1/24, port: 1/1}
  - name: node2
    esxi: esx2.example
    os: ubuntu-16.04
    data_interface: ens224
    gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
    nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
    data: {address: 10.0.0.2/24, port: 1/2}
`

// yamlScalar writes s as a YAML double-quoted scalar that yaml.v3 reads back
// as exactly s.
func yamlScalar(s string) string {
	b, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Tag: "!!str", Value: s})
	if err != nil {
		return `""`
	}
	return strings.TrimSuffix(string(b), "\n")
}

// fuzzInventory fills the template with values (by fields' order); the
// inventory's path is the "file" value.
func fuzzInventory(values []string) (name string, src []byte) {
	text := fuzzTemplate
	for i, f := range fields {
		if f.key == "file" {
			name = values[i]
			continue
		}
		text = strings.ReplaceAll(text, "{{"+f.key+"}}", yamlScalar(values[i]))
	}
	return name, []byte(text)
}

// generate is Tree without the sort: each generator's files in its own
// order (Stream's), so that an inventory and its twin pair file by file.
func generate(inv *inventory.Inventory) []artifact.File {
	return slices.Collect(Stream(inv))
}

func plainValues() []string {
	v := make([]string, len(fields))
	for i, f := range fields {
		v[i] = f.plain
	}
	return v
}

func FuzzFields(f *testing.F) {
	hostile := map[string][]string{
		"model":     {"V100\ntouch PWNED #", "V100\x00", "V100\x1b[31m", `V100"`, "V100'; touch PWNED; '", "$(touch PWNED)", "Tesla V100 (PCIe)"},
		"portgroup": {"a\nb", `RoCE"net`, "VM Network #2", "$HOME", "`id`"},
		"image":     {"--privileged", "horovod/horovod latest", "x\ny", "localhost:5000/h:1", "registry.example/team/h@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		"file":      {"c\ntouch PWNED #.yaml", "\x1b[2J.yaml", "dir with space/c.yaml", "c\r\n.yaml"},
		"host":      {"a\nb", "node-1.example", "-n"},
		"esxi":      {"a..b", "x.", "esx;reboot", "esx-1"},
		"iface":     {"lo", "eth0;reboot", "enp1f0.100"},
		"name":      {"fz\nx", "fz.cluster"},
		"mgmt":      {"0.0.0.0", "[fd00::1]:22", "node1:2222"},
		"hca":       {"mlx5_0;x", "mlx5_1"},
		"vcenter":   {"http://vc/sdk", "https://u:p@vc/sdk", "https://vc.example:8443/sdk"},
		"dns":       {"224.0.0.1", "1.1.1.1"},
	}
	add := func(v []string) {
		f.Add(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14])
	}
	add(plainValues())
	for i, fl := range fields {
		for _, h := range hostile[fl.key] {
			v := plainValues()
			v[i] = h
			add(v)
		}
	}
	f.Fuzz(func(t *testing.T, file, name, host, esxi, vm, model, portgroup, image, iface, hca, mgmt, pci, vcenter, dns, sw string) {
		checkFields(t, []string{file, name, host, esxi, vm, model, portgroup, image, iface, hca, mgmt, pci, vcenter, dns, sw})
	})
}

func checkFields(t *testing.T, values []string) {
	for _, v := range values {
		if !utf8.ValidString(v) {
			t.Skip("a YAML file is Unicode text: invalid UTF-8 is FuzzLoad's case")
		}
	}
	name, src := fuzzInventory(values)
	inv, err := inventory.Load(name, src)
	if err != nil {
		checkReport(t, err)
		return
	}
	got := generate(inv)
	twinInv := twinFor(t, values)
	want := generate(twinInv)
	if len(got) != len(want) {
		t.Fatalf("%d files, the twin has %d", len(got), len(want))
	}
	for i := range got {
		checkPath(t, got[i].Path)
		if err := sameShape(got[i], want[i]); err != nil {
			t.Errorf("%s (twin %s): %v\n--- got:\n%s\n--- twin:\n%s", got[i].Path, want[i].Path, err, got[i].Data, want[i].Data)
		}
	}
}

// twinFor is the inventory with every fuzzed field plain. A GPU model that
// validates may be one rdggen knows (its BAR1 size) or not, which changes a
// comment; the twin's model is of the same kind.
func twinFor(t *testing.T, values []string) *inventory.Inventory {
	v := plainValues()
	for i := range values {
		if values[i] == "" && fields[i].key != "file" { // unset: the field's default
			v[i] = ""
		}
	}
	for i, f := range fields {
		if f.key == "model" {
			if _, known := vmx.LookupGPU(values[i], 16); !known {
				v[i] = "Unknown-GPU"
			}
		}
	}
	name, src := fuzzInventory(v)
	inv, err := inventory.Load(name, src)
	if err != nil {
		t.Fatalf("the twin inventory does not load: %v\n%s", err, src)
	}
	return inv
}

// checkReport: a refused inventory's findings are one line each and name a
// file, a position or a field.
func checkReport(t *testing.T, err error) {
	rep, ok := err.(*inventory.Report)
	if !ok || rep.Count() == 0 {
		t.Fatalf("Load failed without findings: %T %v", err, err)
	}
	for _, f := range rep.Findings {
		if s := f.String(); strings.ContainsAny(s, "\n\r\x00\x1b") {
			t.Errorf("a finding spans lines or carries control characters: %q", s)
		}
	}
}

// checkPath: what Write accepts (generation of a valid inventory never fails).
func checkPath(t *testing.T, p string) {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") || strings.Contains(p, "//") || strings.HasSuffix(p, "/") {
		t.Errorf("artifact path %q would be refused by Write", p)
	}
}

// sameShape compares a generated file with its twin's in the file's language.
func sameShape(got, want artifact.File) error {
	g, w := string(got.Data), string(want.Data)
	if n, m := strings.Count(g, "\n"), strings.Count(w, "\n"); n != m {
		return fmt.Errorf("%d lines, the twin has %d", n, m)
	}
	switch {
	case strings.HasSuffix(got.Path, ".sh") || strings.HasSuffix(got.Path, "/rdggen-routes"):
		a, err := shellShape(g, got.Path)
		if err != nil {
			return err
		}
		b, err := shellShape(w, want.Path)
		if err != nil {
			return fmt.Errorf("the twin: %w", err)
		}
		if a != b {
			return fmt.Errorf("shell commands differ:\n%s\ntwin:\n%s", a, b)
		}
	case strings.HasSuffix(got.Path, ".vmx"):
		return sameLines(g, w, vmxLine, "VMX")
	case strings.HasSuffix(got.Path, ".cfg"):
		return sameLines(g, w, onyxLine, "ONYX")
	case strings.HasSuffix(got.Path, ".service"):
		return sameLines(g, w, unitLine, "systemd")
	case strings.HasSuffix(got.Path, "-nvidia-peermem.conf"):
		return sameLines(g, w, modulesLoadLine, "modules-load.d")
	case strings.HasSuffix(got.Path, ".conf"):
		return sameLines(g, w, sysctlLine, "sysctl")
	case strings.HasSuffix(got.Path, ".json"):
		var a, b map[string]any
		if err := json.Unmarshal(got.Data, &a); err != nil {
			return err
		}
		if err := json.Unmarshal(want.Data, &b); err != nil {
			return err
		}
		if keys(a) != keys(b) {
			return fmt.Errorf("JSON keys %s, the twin's %s", keys(a), keys(b))
		}
	case strings.HasSuffix(got.Path, ".svg"):
		a, err := svgShape(got.Data)
		if err != nil {
			return err
		}
		b, err := svgShape(want.Data)
		if err != nil {
			return fmt.Errorf("the twin: %w", err)
		}
		if a != b {
			return fmt.Errorf("SVG elements differ from the twin's")
		}
	case strings.HasSuffix(got.Path, ".yaml"):
		var a, b yaml.Node
		if err := yaml.Unmarshal(got.Data, &a); err != nil {
			return err
		}
		if err := yaml.Unmarshal(want.Data, &b); err != nil {
			return err
		}
		if yamlShape(&a) != yamlShape(&b) {
			return fmt.Errorf("YAML structure %s, the twin's %s", yamlShape(&a), yamlShape(&b))
		}
	}
	return nil
}

var (
	// vmxLine: blank, a comment, or one key = "value" with no quote inside.
	vmxLine = regexp.MustCompile(`^(|#.*|([A-Za-z0-9_.:]+) = "[^"\\]*")$`)
	// onyxLine: blank, a ## comment, or a command of ONYX's CLI (indented
	// as in a running-config; group 2, compared with the twin, is its verb).
	// '@' and '+' are in port descriptions (vm@esxi/vmnicN, "+3" VMs).
	onyxLine = regexp.MustCompile(`^(|##.*|(?:   )?([a-z]+)(?: [a-zA-Z0-9 /.:,_@+-]*)?)$`)
	// unitLine: blank, a comment, a [Section] or Key=value.
	unitLine = regexp.MustCompile(`^(|#.*|\[[A-Za-z]+\]|([A-Za-z]+)=.*)$`)
	// sysctlLine: blank, a comment or key = value.
	sysctlLine = regexp.MustCompile(`^(|#.*|([a-z0-9_.]+) = [0-9]+)$`)
	// modulesLoadLine: blank, a comment or a module name (modules-load.d(5)).
	modulesLoadLine = regexp.MustCompile(`^(|#.*|([a-z0-9_-]+))$`)
)

// sameLines checks every line against the language's form and that the
// non-comment lines' keys (group 2) are the twin's, in order.
func sameLines(got, want string, form *regexp.Regexp, lang string) error {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i, l := range gl {
		m := form.FindStringSubmatch(l)
		if m == nil {
			return fmt.Errorf("line %d is not a %s line: %q", i+1, lang, l)
		}
		wm := form.FindStringSubmatch(wl[i])
		if wm == nil {
			return fmt.Errorf("the twin's line %d is not a %s line: %q", i+1, lang, wl[i])
		}
		if m[2] != wm[2] {
			return fmt.Errorf("line %d: %q, the twin has %q", i+1, m[2], wm[2])
		}
	}
	return nil
}

func keys(m map[string]any) string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	return fmt.Sprint(sortStrings(k))
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// netplanKeys are the mapping keys of rdggen's netplan files; any other key
// (an interface name) is shown as "*".
var netplanKeys = map[string]bool{"network": true, "version": true, "ethernets": true, "routes": true, "to": true, "via": true, "mtu": true}

// svgShape parses an SVG document strictly and returns its elements' names
// in order, tooltips (title, added where a long value is cut) left out.
func svgShape(data []byte) (string, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var names []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return strings.Join(names, " "), nil
		}
		if err != nil {
			return "", fmt.Errorf("not well-formed XML: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local != "title" {
			names = append(names, se.Name.Local)
		}
	}
}

// yamlShape is a YAML tree with every scalar value as "_" and every key that
// is not netplan's own as "*".
func yamlShape(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			b.WriteString("[")
			for _, c := range n.Content {
				walk(c)
			}
			b.WriteString("]")
		case yaml.MappingNode:
			b.WriteString("{")
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if !netplanKeys[k] {
					k = "*"
				}
				b.WriteString(k + ":")
				walk(n.Content[i+1])
			}
			b.WriteString("}")
		default:
			b.WriteString("_ ")
		}
	}
	walk(n)
	return b.String()
}

// shellShape parses a script with mvdan.cc/sh (bash for run.sh, POSIX sh
// otherwise) and returns its skeleton: every statement with its command's
// first word when that is literal (the command's name), its number of words,
// and every expansion ($VAR, $(…), $((…))) in each word — not the words'
// text, which differs between an inventory and its twin. Comments do not
// count; a heredoc's body is the text of one word.
func shellShape(src, name string) (string, error) {
	lang := syntax.LangPOSIX
	if strings.HasSuffix(name, "run.sh") {
		lang = syntax.LangBash
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), name)
	if err != nil {
		return "", fmt.Errorf("does not parse as a shell script: %w", err)
	}
	var b strings.Builder
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			b.WriteString("\n;")
		case *syntax.CallExpr:
			cmd := "?"
			if len(x.Args) > 0 {
				if lit := x.Args[0].Lit(); lit != "" {
					cmd = lit
				}
			}
			fmt.Fprintf(&b, " call %s/%d", cmd, len(x.Args))
		case *syntax.ParamExp:
			fmt.Fprintf(&b, " $%s", x.Param.Value)
		case *syntax.CmdSubst:
			b.WriteString(" $(")
		case *syntax.ArithmExp:
			b.WriteString(" $((")
		case *syntax.ProcSubst:
			b.WriteString(" <(")
		case *syntax.Redirect:
			fmt.Fprintf(&b, " %s", x.Op)
		case *syntax.BinaryCmd:
			fmt.Fprintf(&b, " %s", x.Op)
		case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl, *syntax.Block, *syntax.Subshell:
			fmt.Fprintf(&b, " %T", x)
		}
		return true
	})
	return b.String(), nil
}

// FuzzLoad feeds whole files to the loader: it never panics, a refused file
// gets one-line findings, and a file that validates generates a tree that
// Write accepts, every file in its language's form.
func FuzzLoad(f *testing.F) {
	f.Add(inventory.ReferenceYAML)
	_, src := fuzzInventory(plainValues())
	f.Add(src)
	f.Add([]byte("name: x\n---\nhosts: [unclosed\n"))
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nhosts: [*c, *c]\n"))
	f.Add([]byte("name: !!python/object:os.system x\n"))
	f.Add([]byte("roce: {buffer_percent: .nan}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		inv, err := inventory.Load("fuzz.yaml", src)
		if err != nil {
			checkReport(t, err)
			return
		}
		for _, file := range Tree(inv) {
			checkPath(t, file.Path)
			if err := sameShape(file, file); err != nil {
				t.Errorf("%s: %v\n%s", file.Path, err, file.Data)
			}
		}
	})
}
