package inventory_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// An inventory built from Go values is the one the same file loads to:
// the reference YAML decoded into a Spec by yaml.v3 (not by rdggen's own
// decoder) and built gives exactly what Load gives.
func TestBuildEqualsLoad(t *testing.T) {
	loaded, err := inventory.Load("cluster.yaml", inventory.ReferenceYAML)
	if err != nil {
		t.Fatal(err)
	}
	var s inventory.Spec
	if err := yaml.Unmarshal(inventory.ReferenceYAML, &s); err != nil {
		t.Fatal(err)
	}
	built, err := inventory.Build("cluster.yaml", &s)
	if err != nil {
		t.Fatal(err)
	}
	// Every field, unexported ones too, except the file positions.
	all := cmp.Exporter(func(reflect.Type) bool { return true })
	noPos := cmp.FilterPath(func(p cmp.Path) bool {
		sf, ok := p.Last().(cmp.StructField)
		return ok && sf.Name() == "pos"
	}, cmp.Ignore())
	if diff := cmp.Diff(loaded, built, all, noPos); diff != "" {
		t.Errorf("Build differs from Load (-load +build):\n%s", diff)
	}
}

// Findings of a built inventory name the field path, prefixed by the name
// given, without a position; they are the rules a file gets.
func TestBuildFindings(t *testing.T) {
	s := &inventory.Spec{
		Name:     "demo",
		Switches: []inventory.SwitchSpec{{Name: "sw1", Model: "SN2700", ONYX: new(inventory.MustVersion("3.6.8190"))}},
		Defaults: &inventory.HostDefaults{OS: new("ubuntu-18.04"), DataInterface: new("enp1f0"),
			GPUs: []inventory.GPUSpec{{Model: "V100-PCIE-16GB", MemoryGB: new(16)}},
			NIC:  &inventory.NICSpec{Model: "ConnectX-5", PF: "vmnic4", VFs: new(8)}},
		Hosts: []inventory.HostSpec{
			{Name: "h1", ESXi: "esx-1", Data: &inventory.DataSpec{Address: "10.0.0.1/24", Port: "1/1"}},
			{Name: "h2", ESXi: "esx-2", Data: &inventory.DataSpec{Address: "10.0.0.1/24", Port: "1/40"}},
		},
	}
	_, err := inventory.Build("cluster-a", s)
	want := []string{
		"cluster-a: hosts[1].data.address: duplicate data address 10.0.0.1 (also hosts[0])",
		"cluster-a: hosts[1].data.address: duplicate container subnet 172.16.1.0/24 (also hosts[0])",
		"cluster-a: hosts[1].data.port: 1/40 is outside SN2700 ports 1/1-1/32",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("Build: %v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	s.Hosts[1].Data = &inventory.DataSpec{Address: "10.0.0.2/24", Port: "1/2"}
	inv, err := inventory.Build("cluster-a", s)
	if err != nil {
		t.Fatal(err)
	}
	if h := inv.Hosts[1]; h.Subnet.String() != "172.16.2.0/24" || h.VM != "h2" || h.DataMTU != 1500 || h.Data.Switch != "sw1" || inv.Horovod.SSHPort != 12345 {
		t.Errorf("defaults and derivations: %+v", h)
	}
}
