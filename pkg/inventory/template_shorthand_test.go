package inventory

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// `template: NAME` is `template: {name: NAME}`: the same inventory, under a
// host and under defaults; a bad name is found at the scalar, under
// template.name; a value that is neither a name nor a mapping says both.
func TestTemplateShorthand(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/template/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const long = "    template: {name: plain-ubuntu}\n"
	base := strings.Replace(string(src), "    template: {name: plain-ubuntu, cloud_init: false}\n", long, 1)
	if base == string(src) {
		t.Fatal("the template inventory's host template line moved")
	}
	load := func(s string) *Inventory {
		t.Helper()
		inv, err := Load("cluster.yaml", []byte(s))
		if err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
		return inv
	}
	want := load(base)
	got := load(strings.Replace(base, long, "    template: plain-ubuntu\n", 1))
	if want.Hosts[2].Template == nil || want.Hosts[2].Template.Name != "plain-ubuntu" {
		t.Fatalf("the long form's template: %+v", want.Hosts[2].Template)
	}
	if diff := cmp.Diff(want.Hosts[2].Template, got.Hosts[2].Template, equateAddrs); diff != "" {
		t.Errorf("host template: shorthand differs from the mapping (-mapping +shorthand):\n%s", diff)
	}

	// Under defaults, with nothing else set: every host clones it.
	def := string(inventoryWithoutTemplate(t, src))
	a := load(strings.Replace(def, "  nic: {", "  template: {name: ubuntu-gpu}\n  nic: {", 1))
	b := load(strings.Replace(def, "  nic: {", "  template: ubuntu-gpu\n  nic: {", 1))
	for i := range a.Hosts {
		if a.Hosts[i].Template == nil || a.Hosts[i].Template.Name != "ubuntu-gpu" {
			t.Fatalf("host %d: %+v", i, a.Hosts[i].Template)
		}
		if diff := cmp.Diff(a.Hosts[i].Template, b.Hosts[i].Template, equateAddrs); diff != "" {
			t.Errorf("defaults template, host %d (-mapping +shorthand):\n%s", i, diff)
		}
	}

	for _, c := range []struct{ value, want string }{
		{`"a'b"`, "cluster.yaml:35:15: hosts[2].template.name: "},
		{"42", "cluster.yaml:35:15: hosts[2].template: must be the template's name or a mapping of keys to values"},
		{"[plain-ubuntu]", "cluster.yaml:35:15: hosts[2].template: must be the template's name or a mapping of keys to values"},
	} {
		_, err := Load("cluster.yaml", []byte(strings.Replace(base, long, "    template: "+c.value+"\n", 1)))
		var rep *Report
		if !errors.As(err, &rep) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("template: %s: got %v, want a finding starting %q", c.value, err, c.want)
		}
	}
}

// inventoryWithoutTemplate is the template inventory with no template at
// all (the defaults' block and the host's line removed).
func inventoryWithoutTemplate(t *testing.T, src []byte) []byte {
	t.Helper()
	var out []string
	skip := false
	for _, l := range strings.Split(string(src), "\n") {
		switch {
		case l == "  template:":
			skip = true
			continue
		case skip && strings.HasPrefix(l, "    "):
			continue
		case strings.HasPrefix(l, "    template:"):
			continue
		}
		skip = false
		out = append(out, l)
	}
	for _, l := range out {
		if strings.Contains(l, "template") && !strings.HasPrefix(l, "#") {
			t.Fatalf("a template is left: %q", l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// equateAddrs compares netip values (a template's static management
// address and gateway) by value.
var equateAddrs = cmpopts.EquateComparable(netip.Addr{}, netip.Prefix{})
