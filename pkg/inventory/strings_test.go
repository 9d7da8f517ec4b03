package inventory

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// Every string of the model that comes from the inventory has a grammar
// that refuses text able to become code or a second line: quotes, shell
// metacharacters, a leading '-', control characters. The walk over the
// Inventory type makes a new string field fail this test until it is given
// one here (and a check in the loader).
func TestEveryStringFieldHasAGrammar(t *testing.T) {
	// Each field: how to put a value V into baseYAML, and where the finding is.
	type edit struct{ old, new, path string }
	rules := map[string]edit{
		".Name":                            {"name: mini", "name: V", "name"},
		".Switches[].Name":                 {"name: sw1,", "name: V,", "switches[0].name"},
		".Switches[].Model":                {"model: SN2100", "model: V", "switches[0].model"},
		".Switches[].Mgmt":                 {"onyx: 3.6.8190}", "onyx: 3.6.8190, mgmt: V}", "switches[0].mgmt"},
		".VCenter":                         {"name: mini\n", "name: mini\nvcenter: V\n", "vcenter"},
		".Docker.Routing":                  {"name: mini\n", "name: mini\ndocker: {routing: V}\n", "docker.routing"},
		".Horovod.Network":                 {"name: mini\n", "name: mini\nhorovod: {network: V}\n", "horovod.network"},
		".Horovod.Image":                   {"name: mini\n", "name: mini\nhorovod: {image: V}\n", "horovod.image"},
		".Horovod.HCA":                     {"name: mini\n", "name: mini\nhorovod: {hca: V}\n", "horovod.hca"},
		".Horovod.Launcher":                {"name: mini\n", "name: mini\nhorovod: {launcher: V}\n", "horovod.launcher"},
		".Horovod.RdzvID":                  {"name: mini\n", "name: mini\nhorovod: {rdzv_id: V}\n", "horovod.rdzv_id"},
		".Hosts[].Name":                    {"  - name: b", "  - name: V", "hosts[1].name"},
		".Hosts[].ESXi":                    {"    esxi: esx-b", "    esxi: V", "hosts[1].esxi"},
		".Hosts[].VM":                      {"    esxi: esx-b", "    esxi: esx-b\n    vm: V", "hosts[1].vm"},
		".Hosts[].Mgmt":                    {"    esxi: esx-b", "    esxi: esx-b\n    mgmt: V", "hosts[1].mgmt"},
		".Hosts[].OS.Distro":               {"os: ubuntu-18.04", "os: V", "defaults.os"},
		".Hosts[].DataInterface":           {"data_interface: ens224", "data_interface: V", "defaults.data_interface"},
		".Hosts[].GPUs[].Model":            {"model: V100-PCIE-16GB", "model: V", "defaults.gpus[0].model"},
		".Hosts[].GPUs[].PCI":              {"memory_gb: 16}", "memory_gb: 16, pci: V}", "defaults.gpus[0].pci"},
		".Hosts[].NIC.Model":               {"model: ConnectX-5", "model: V", "defaults.nic.model"},
		".Hosts[].NIC.PF":                  {"pf: vmnic4", "pf: V", "defaults.nic.pf"},
		".Hosts[].NIC.PortGroup":           {"vfs: 8}", "vfs: 8, portgroup: V}", "defaults.nic.portgroup"},
		".Hosts[].Data.Switch":             {"port: 1/2}", "port: 1/2, switch: V}", "hosts[1].data.switch"},
		".Hosts[].Rails[].DataLink.Switch": {"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: [{address: 10.0.0.2/24, port: 1/2, switch: V}]", "hosts[1].data[0].switch"},
		".Hosts[].Rails[].PF":              {"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: [{address: 10.0.0.2/24, port: 1/2, pf: V}]", "hosts[1].data[0].pf"},
		".Hosts[].Rails[].Interface":       {"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: [{address: 10.0.0.2/24, port: 1/2, interface: V}]", "hosts[1].data[0].interface"},
		".Switches[].Fabric.Role":          {"onyx: 3.6.8190}", "onyx: 3.6.8190, role: V}", "switches[0].role"},
		".Fabric.Links[].A.Switch": {"  - {name: sw1, model: SN2100, onyx: 3.6.8190}\n",
			"  - {name: sw1, model: SN2100, onyx: 3.6.8190, role: leaf}\nfabric: {links: [{switch: V, port: 1/16, peer: sw1, peer_port: 1/15}]}\n", "fabric.links[0].switch"},
		".Fabric.Links[].B.Switch": {"  - {name: sw1, model: SN2100, onyx: 3.6.8190}\n",
			"  - {name: sw1, model: SN2100, onyx: 3.6.8190, role: leaf}\nfabric: {links: [{switch: sw1, port: 1/16, peer: V, peer_port: 1/15}]}\n", "fabric.links[0].peer"},
	}
	// File is not from the inventory: the command line's path, escaped by
	// DisplayName (TestDisplayName).
	// Warnings are rdggen's text, like findings (Finding.String escapes
	// what they quote).
	// OtherOS is a key of the switch's mapping that names a registered OS:
	// only such keys are read (any other is an unknown key), and
	// RegisterSwitchOS holds them to a grammar (TestRegisterSwitchOS).
	notFromTheFile := map[string]bool{".File": true, ".Warnings[].File": true, ".Warnings[].Path": true, ".Warnings[].Rule": true,
		".Switches[].OtherOS": true}

	var fields []string
	var walk func(tp reflect.Type, p string)
	walk = func(tp reflect.Type, p string) {
		switch tp.Kind() {
		case reflect.String:
			fields = append(fields, p)
		case reflect.Struct:
			for i := 0; i < tp.NumField(); i++ {
				if f := tp.Field(i); f.IsExported() {
					walk(f.Type, p+"."+f.Name)
				}
			}
		case reflect.Slice:
			walk(tp.Elem(), p+"[]")
		}
	}
	walk(reflect.TypeOf(Inventory{}), "")
	sort.Strings(fields)

	hostile := []string{"x\ntouch PWNED #", "x\x00", "x\x1b[2J", "x'y", `x"y`, "$(id)", "`id`", "-x", "x;y", "x|y", "x&y", "x>y", " x", `x\y`, "x y\nz", "x\ry"}
	for _, field := range fields {
		if notFromTheFile[field] {
			continue
		}
		e, ok := rules[field]
		if !ok {
			t.Errorf("inventory string %s has no grammar test: add it here and a check in the loader", field)
			continue
		}
		if !strings.Contains(baseYAML, e.old) {
			t.Fatalf("%s: %q is not in baseYAML", field, e.old)
		}
		for _, v := range hostile {
			src := strings.Replace(baseYAML, e.old, strings.ReplaceAll(e.new, "V", yamlQuoted(v)), 1)
			_, err := Load("mini.yaml", []byte(src))
			rep, isRep := err.(*Report)
			found := false
			if isRep {
				for _, f := range rep.Findings {
					found = found || f.Path == e.path
				}
			}
			if !found {
				t.Errorf("%s = %q: no finding at %s (got %v)", field, v, e.path, err)
			}
		}
	}
}

// yamlQuoted writes s as a YAML double-quoted scalar.
func yamlQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(strings.ToUpper(string("0123456789abcdef"[r>>4])) + strings.ToUpper(string("0123456789abcdef"[r&15])))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
