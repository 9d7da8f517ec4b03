package cumulus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// load is the reference cluster with its switch on Cumulus Linux version
// ver, the data ports spelled swpN, and edit applied to the YAML.
func load(t *testing.T, ver string, edit ...string) *inventory.Inventory {
	t.Helper()
	src := strings.Replace(string(inventory.ReferenceYAML), "onyx: 3.6.8190", "cumulus: "+ver, 1)
	for i := 0; i+1 < len(edit); i += 2 {
		if !strings.Contains(src, edit[i]) {
			t.Fatalf("%q is not in the inventory", edit[i])
		}
		src = strings.Replace(src, edit[i], edit[i+1], 1)
	}
	inv, err := inventory.Load("cluster.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestIntentReference(t *testing.T) {
	inv := load(t, "5.9.1")
	got := Intent(inv, inv.Switches[0])
	// Each data port, described with the VM and the ESXi host and PF its
	// cable comes from.
	port := func(n int) Tree {
		return Tree{
			"type":        "swp",
			"link":        Tree{"mtu": 9216, "state": Tree{"up": Tree{}}},
			"bridge":      Tree{"domain": Tree{"br_default": Tree{"access": 1}}},
			"description": fmt.Sprintf("clx-mld-%d@esx-%d.example/vmnic4", 40+n, 40+n),
		}
	}
	want := Tree{
		"system":    Tree{"hostname": "swx-mld-1-2"},
		"qos":       Tree{"roce": Tree{"enable": "on", "mode": "lossless"}},
		"service":   Tree{"lldp": Tree{}},
		"bridge":    Tree{"domain": Tree{"br_default": Tree{"vlan": Tree{"1": Tree{}}}}},
		"interface": Tree{"swp1": port(1), "swp2": port(2), "swp3": port(3), "swp4": port(4), "swp5": port(5), "swp6": port(6), "swp7": port(7), "swp8": port(8)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Intent (-want +got):\n%s", d)
	}
}

func TestIntentRoutedPool(t *testing.T) {
	inv := load(t, "5.9.1", "  # routing: switch", "  routing: switch")
	got := Intent(inv, inv.Switches[0])
	svi := got["interface"].(Tree)["vlan1"]
	if d := cmp.Diff(Tree{"type": "svi", "vlan": 1, "ip": Tree{"address": Tree{"31.31.31.254/24": Tree{}}}}, svi); d != "" {
		t.Errorf("vlan1 (-want +got):\n%s", d)
	}
	static := got["vrf"].(Tree)["default"].(Tree)["router"].(Tree)["static"].(Tree)
	if len(static) != 8 {
		t.Fatalf("%d static routes, want 8 (one per host): %v", len(static), static)
	}
	want := Tree{"address-family": "ipv4-unicast", "via": Tree{"31.31.31.47": Tree{"type": "ipv4-address"}}}
	if d := cmp.Diff(want, static["172.16.47.0/24"]); d != "" {
		t.Errorf("route of clx-mld-47 (-want +got):\n%s", d)
	}
	// docker.gateway moves the SVI's address.
	inv = load(t, "5.9.1", "  # routing: switch", "  routing: switch\n  gateway: 31.31.31.1")
	addr := Intent(inv, inv.Switches[0])["interface"].(Tree)["vlan1"].(Tree)["ip"].(Tree)["address"].(Tree)
	if _, ok := addr["31.31.31.1/24"]; !ok || len(addr) != 1 {
		t.Errorf("gateway 31.31.31.1: vlan1 addresses %v", addr)
	}
}

func TestIntentFollowsVersion(t *testing.T) {
	for _, tc := range []struct {
		ver            string
		underSystem    bool
		autoSaves      bool
		wantSaveInFile bool
	}{
		// Every script saves: from 5.9 the apply saves too, unless
		// auto-save was turned off, which the script cannot know.
		{"5.0.0", false, false, true},
		{"5.8.0", false, false, true},
		{"5.9.1", false, true, true},
		{"5.14.0", false, true, true},
		{"5.15.0", true, true, true},
	} {
		inv := load(t, tc.ver)
		sw := inv.Switches[0]
		in := Intent(inv, sw)
		_, system := in["system"].(Tree)["lldp"]
		_, service := in["service"]
		if system != tc.underSystem || service == tc.underSystem {
			t.Errorf("%s: lldp under system %v, under service %v; want under system %v", tc.ver, system, service, tc.underSystem)
		}
		if AutoSaves(sw) != tc.autoSaves {
			t.Errorf("%s: AutoSaves %v", tc.ver, AutoSaves(sw))
		}
		sh := string(Commands(inv, sw))
		if strings.Contains(sh, "\nnv config save\n") != tc.wantSaveInFile {
			t.Errorf("%s: nv config save in the script = %v, want %v", tc.ver, !tc.wantSaveInFile, tc.wantSaveInFile)
		}
	}
}

// Every leaf Intent writes is covered by Owned, in both routing modes
// and on both LLDP forms: the apply engine may change nothing else.
func TestOwnedCoversIntent(t *testing.T) {
	for _, inv := range []*inventory.Inventory{
		load(t, "5.9.1"),
		load(t, "5.15.0", "  # routing: switch", "  routing: switch"),
	} {
		paths, _ := Leaves(Intent(inv, inv.Switches[0]))
		if len(paths) < 30 {
			t.Fatalf("only %d leaves", len(paths))
		}
		for _, p := range paths {
			owned := false
			for _, q := range Owned() {
				owned = owned || p.Match(q)
			}
			if !owned {
				t.Errorf("%s: leaf %q is not in Owned", inv.Switches[0].Release(), p)
			}
		}
	}
	if (Path{"qos", "roce", "mode"}).Match(Path{"qos", "roce"}) || !(Path{"interface", "swp3", "type"}).Match(Path{"interface", "*", "type"}) {
		t.Error("Match")
	}
}

func TestPathREST(t *testing.T) {
	for p, want := range map[string]string{
		"qos roce mode": "/nvue_v1/qos/roce/mode",
		"vrf default router static 172.16.41.0/24":   "/nvue_v1/vrf/default/router/static/172.16.41.0%2F24",
		"interface vlan1 ip address 31.31.31.254/24": "/nvue_v1/interface/vlan1/ip/address/31.31.31.254%2F24",
	} {
		if got := Path(strings.Fields(p)).REST(); got != want {
			t.Errorf("%s: REST %s, want %s", p, got, want)
		}
	}
}

// The YAML file is one `- set:` document whose tree is exactly Intent, and
// its JSON is the REST API's shape (numbers as numbers, "on" a string).
func TestYAMLIsIntent(t *testing.T) {
	inv := load(t, "5.9.1", "  # routing: switch", "  routing: switch")
	sw := inv.Switches[0]
	var doc []map[string]Tree
	if err := yaml.Unmarshal(YAML(inv, sw), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 1 || len(doc[0]) != 1 {
		t.Fatalf("want one document with one set, got %v", doc)
	}
	if d := cmp.Diff(jsonOf(t, Intent(inv, sw)), jsonOf(t, doc[0]["set"])); d != "" {
		t.Errorf("YAML's set != Intent (-intent +yaml):\n%s", d)
	}
	j := string(jsonOf(t, Intent(inv, sw)))
	for _, s := range []string{`"mtu":9216`, `"enable":"on"`, `"vlan":1`, `"172.16.41.0/24":{"address-family":"ipv4-unicast","via":{"31.31.31.41":{"type":"ipv4-address"}}}`} {
		if !strings.Contains(j, s) {
			t.Errorf("JSON lacks %s:\n%s", s, j)
		}
	}
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The nv set lines are the YAML's leaves, with the data ports merged into
// one range; each port's description (what is cabled to it) is its own.
func TestCommands(t *testing.T) {
	inv := load(t, "5.9.1")
	sh := string(Commands(inv, inv.Switches[0]))
	want := []string{
		"set -e",
		"nv set bridge domain br_default vlan 1",
		"nv set interface swp1 description clx-mld-41@esx-41.example/vmnic4",
		"nv set interface swp1-8 bridge domain br_default access 1",
		"nv set interface swp1-8 link mtu 9216",
		"nv set interface swp1-8 link state up",
		"nv set interface swp1-8 type swp",
		"nv set interface swp2 description clx-mld-42@esx-42.example/vmnic4",
		"nv set interface swp3 description clx-mld-43@esx-43.example/vmnic4",
		"nv set interface swp4 description clx-mld-44@esx-44.example/vmnic4",
		"nv set interface swp5 description clx-mld-45@esx-45.example/vmnic4",
		"nv set interface swp6 description clx-mld-46@esx-46.example/vmnic4",
		"nv set interface swp7 description clx-mld-47@esx-47.example/vmnic4",
		"nv set interface swp8 description clx-mld-48@esx-48.example/vmnic4",
		"nv set qos roce enable on",
		"nv set qos roce mode lossless",
		"nv set service lldp",
		"nv set system hostname swx-mld-1-2",
		"nv config diff",
		"nv config apply",
		"nv config save",
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(sh, "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			got = append(got, l)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(sh, "#!/bin/sh\n") {
		t.Error("no #! line")
	}
}

func TestRanges(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"swp1 swp2 swp3 swp5", "swp1-3 swp5"},
		{"swp10 swp9 swp11 swp1", "swp1 swp9-11"},
		{"swp4", "swp4"},
		{"swp2 swp2 swp3", "swp2-3"},
		{"vlan1 swp1", "swp1 vlan1"},
	} {
		if got := strings.Join(Ranges(strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("Ranges(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// Ports with different settings are not merged: a mixed inventory's
	// non-contiguous ports become a list.
	inv := load(t, "5.9.1", "port: 1/3}", "port: swp30}")
	sh := string(Commands(inv, inv.Switches[0]))
	if !strings.Contains(sh, "nv set interface swp1-2,swp4-8,swp30 link mtu 9216\n") {
		t.Errorf("ranges of swp1,2,4-8,30:\n%s", sh)
	}
}

// The script is valid sh, and each nv set line reaches nv as the words
// SetLines gives: run it with nv a shell function that records its
// arguments.
func TestCommandsRunAsWords(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh:", err)
	}
	inv := load(t, "5.6.0", "  # routing: switch", "  routing: switch")
	sw := inv.Switches[0]
	script := "nv() { printf '%s\\037' \"$@\"; printf '\\n'; }\n" + string(Commands(inv, sw))
	cmd := exec.Command(sh, "-c", script)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	var got [][]string
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		got = append(got, strings.Split(strings.TrimSuffix(l, "\037"), "\037"))
	}
	var want [][]string
	for _, w := range SetLines(Intent(inv, sw)) {
		want = append(want, append([]string{"set"}, w...))
	}
	want = append(want, []string{"config", "diff"}, []string{"config", "apply"}, []string{"config", "save"})
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("nv's arguments (-want +got):\n%s", d)
	}
}

// A hostile inventory path cannot leave the comment lines of either file.
func TestHeaderEscapesInventoryPath(t *testing.T) {
	inv := load(t, "5.9.1")
	inv.File = "x\nnv set system hostname evil\n- set: {}"
	for _, b := range [][]byte{YAML(inv, inv.Switches[0]), Commands(inv, inv.Switches[0])} {
		if bytes.Contains(b, []byte("\nnv set system hostname evil")) || bytes.Contains(b, []byte("\n- set: {}")) {
			t.Errorf("the path escaped its comment:\n%s", b)
		}
	}
}

func BenchmarkArtifacts(b *testing.B) {
	src := strings.Replace(string(inventory.ReferenceYAML), "onyx: 3.6.8190", "cumulus: 5.9.1", 1)
	src = strings.Replace(src, "  # routing: switch", "  routing: switch", 1)
	inv, err := inventory.Load("cluster.yaml", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Artifacts(inv)
	}
}

// routedYAML is a Cumulus gateway switch (docker.routing: switch) with n
// hosts, 8 VMs per ESXi host sharing its port (n ≤ 512 on an SN4600C's 64
// ports).
func routedYAML(n int) []byte {
	var b strings.Builder
	b.WriteString(`name: scale
switches: [{name: leaf1, model: SN4600C, cumulus: 5.9.1}]
docker: {pool: 10.0.0.0/8, prefix: 24, routing: switch}
defaults:
  os: ubuntu-20.04
  data_interface: ens224
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
`)
	for i := range n {
		off := i + 1
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 100.64.%d.%d/21, port: swp%d}}\n", i+1, i/8+1, off>>8, off&255, i/8+1)
	}
	return []byte(b.String())
}

func TestRoutedAtScale(t *testing.T) {
	inv, err := inventory.Load("scale.yaml", routedYAML(512))
	if err != nil {
		t.Fatal(err)
	}
	in := Intent(inv, inv.Switches[0])
	if n := len(in["vrf"].(Tree)["default"].(Tree)["router"].(Tree)["static"].(Tree)); n != 512 {
		t.Errorf("%d routes, want 512", n)
	}
	if n := len(in["interface"].(Tree)); n != 65 { // swp1-64 and vlan1
		t.Errorf("%d interfaces, want 65", n)
	}
	if !strings.Contains(string(Commands(inv, inv.Switches[0])), "nv set interface swp1-64 link mtu 9216\n") {
		t.Error("the 64 data ports are not one range")
	}
}

// BenchmarkRoutedGateway512 is the largest gateway switch an SN4600C can
// be: 512 hosts (64 ESXi hosts of 8 VMs), 512 static routes.
func BenchmarkRoutedGateway512(b *testing.B) {
	inv, err := inventory.Load("scale.yaml", routedYAML(512))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = 0
		for _, f := range Artifacts(inv) {
			n += len(f.Data)
		}
	}
	b.ReportMetric(float64(n), "bytes/switch")
}
