package dockernet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
)

func host(inv *inventory.Inventory, name string) *inventory.Host {
	for i := range inv.Hosts {
		if inv.Hosts[i].Name == name {
			return &inv.Hosts[i]
		}
	}
	panic("no host " + name)
}

// clx-mld-41's routes are exactly the 7 other hosts' container subnets via
// their data addresses.
func TestRoutesReference41(t *testing.T) {
	inv := inventory.Reference()
	h := host(inv, "clx-mld-41")
	var got []string
	for _, r := range Routes(inv, h) {
		got = append(got, r.Command())
	}
	want := []string{
		"route replace 172.16.42.0/24 via 31.31.31.42 dev enp1f0",
		"route replace 172.16.43.0/24 via 31.31.31.43 dev enp1f0",
		"route replace 172.16.44.0/24 via 31.31.31.44 dev enp1f0",
		"route replace 172.16.45.0/24 via 31.31.31.45 dev enp1f0",
		"route replace 172.16.46.0/24 via 31.31.31.46 dev enp1f0",
		"route replace 172.16.47.0/24 via 31.31.31.47 dev enp1f0",
		"route replace 172.16.48.0/24 via 31.31.31.48 dev enp1f0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("routes of clx-mld-41 (-want +got):\n%s", diff)
	}
	// The scripts carry exactly these lines (comments aside), and never the own subnet.
	for _, text := range []string{string(RoutesScript(inv, h)), string(RoutesPersist(inv, h))} {
		var lines []string
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "route ") {
				l, _, _ = strings.Cut(l, "  #")
				lines = append(lines, l)
			}
		}
		if diff := cmp.Diff(want, lines); diff != "" {
			t.Errorf("route lines in a script (-want +got):\n%s", diff)
		}
		if strings.Contains(text, "route replace 172.16.41.0/24") {
			t.Errorf("a script routes the host's own subnet:\n%s", text)
		}
	}
}

func TestRoutesNeverOwnSubnetAllHosts(t *testing.T) {
	inv := inventory.Reference()
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		rs := Routes(inv, h)
		if len(rs) != len(inv.Hosts)-1 {
			t.Errorf("%s: %d routes, want %d", h.Name, len(rs), len(inv.Hosts)-1)
		}
		for _, r := range rs {
			if r.Dst.Overlaps(h.Subnet) || r.Host == h.Name {
				t.Errorf("%s: route %s is its own subnet", h.Name, r.Command())
			}
			if !h.Data.Address.Masked().Contains(r.Via) {
				t.Errorf("%s: next hop %s is not on %s", h.Name, r.Via, h.Data.Address.Masked())
			}
		}
	}
}

func TestNetplanForUbuntu18(t *testing.T) {
	src := strings.Replace(string(inventory.ReferenceYAML), "os: ubuntu-16.04", "os: ubuntu-20.04", 1)
	inv, err := inventory.Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	h := host(inv, "clx-mld-48")
	if RoutesPersistPath(h) != NetplanPath || RoutesPersistMode(h) != 0o600 {
		t.Fatalf("persist path %s mode %o", RoutesPersistPath(h), RoutesPersistMode(h))
	}
	got := string(RoutesPersist(inv, h))
	body := got[strings.Index(got, "network:"):]
	want := "network:\n  version: 2\n  ethernets:\n    enp1f0:\n      mtu: 1500\n      routes:\n"
	for n := 41; n <= 47; n++ {
		want += fmt.Sprintf("        - to: 172.16.%d.0/24\n          via: 31.31.31.%d\n", n, n)
	}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("netplan (-want +got):\n%s", diff)
	}
	// Under the ID a host's own netplan files use for the interface.
	got = string(NetplanFor(inv, h, "data0", "match.name in /etc/netplan/50-cloud-init.yaml"))
	if !strings.Contains(got, "  ethernets:\n    data0:\n      mtu: 1500\n") || !strings.Contains(got, "# amend one definition: data0 is the ID that configures enp1f0 (match.name in /etc/netplan/50-cloud-init.yaml).\n") {
		t.Errorf("netplan under data0:\n%s", got)
	}
}

func TestDaemonJSON(t *testing.T) {
	inv := inventory.Reference()
	got := string(DaemonJSON(inv, host(inv, "clx-mld-41")))
	want := `{
  "bip": "172.16.41.1/24",
  "fixed-cidr": "172.16.41.0/24",
  "mtu": 1500,
  "dns": ["8.8.8.8", "8.8.4.4"]
}
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("daemon.json (-want +got):\n%s", diff)
	}
	if err := Validate([]byte(got)); err != nil {
		t.Errorf("own daemon.json does not validate: %v", err)
	}
	// Docker ≥ 28.2 adds allow-direct-routing.
	src := strings.Replace(string(inventory.ReferenceYAML), `version: "18.09"`, `version: "28.2"`, 1)
	inv28, err := inventory.Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got28 := string(DaemonJSON(inv28, host(inv28, "clx-mld-41")))
	if !strings.Contains(got28, `"allow-direct-routing": true`) || strings.Contains(got, "allow-direct-routing") {
		t.Errorf("allow-direct-routing must be set on 28.2 only:\n%s\n%s", got, got28)
	}
	for _, bad := range []string{`"bridge"`, `"hosts"`} {
		if strings.Contains(got+got28, bad) {
			t.Errorf("daemon.json contains %s", bad)
		}
	}
}

const nvidiaDocker2 = `{
    "runtimes": {
        "nvidia": {
            "path": "nvidia-container-runtime",
            "runtimeArgs": []
        }
    },
    "default-runtime": "nvidia",
    "log-opts": {"max-size": "10m"},
    "mtu": 1500
}
`

// Merge keeps an existing runtimes.nvidia entry and unrelated keys, and is
// stable when run twice.
func TestMergeKeepsRuntimesAndIsStable(t *testing.T) {
	inv := inventory.Reference()
	ours := DaemonJSON(inv, host(inv, "clx-mld-41"))
	got, err := Merge([]byte(nvidiaDocker2), ours)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
    "runtimes": {
        "nvidia": {
            "path": "nvidia-container-runtime",
            "runtimeArgs": []
        }
    },
    "default-runtime": "nvidia",
    "log-opts": {"max-size": "10m"},
    "mtu": 1500,
    "bip": "172.16.41.1/24",
    "fixed-cidr": "172.16.41.0/24",
    "dns": ["8.8.8.8", "8.8.4.4"]
}
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Fatalf("merged (-want +got):\n%s", diff)
	}
	again, err := Merge(got, ours)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, got) {
		t.Errorf("Merge is not stable:\nfirst:\n%s\nsecond:\n%s", got, again)
	}
	if err := Validate(got); err != nil {
		t.Errorf("merged file does not validate: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	if m["runtimes"].(map[string]any)["nvidia"].(map[string]any)["path"] != "nvidia-container-runtime" {
		t.Errorf("runtimes.nvidia lost: %v", m)
	}
}

func TestMergeCases(t *testing.T) {
	inv := inventory.Reference()
	ours := DaemonJSON(inv, host(inv, "clx-mld-42"))
	for _, tc := range []struct {
		name, existing, want string
	}{
		{"absent", "", string(ours)},
		{"whitespace", " \n", string(ours)},
		{"empty object", "{}\n", string(ours)},
		{"one line", `{"debug":true}`,
			`{"debug":true,"bip": "172.16.42.1/24","fixed-cidr": "172.16.42.0/24","mtu": 1500,"dns": ["8.8.8.8", "8.8.4.4"]}`},
		{"value replaced in place", "{\n\t\"bip\": \"172.17.0.1/16\",\n\t\"debug\": true\n}\n",
			"{\n\t\"bip\": \"172.16.42.1/24\",\n\t\"debug\": true,\n\t\"fixed-cidr\": \"172.16.42.0/24\",\n\t\"mtu\": 1500,\n\t\"dns\": [\"8.8.8.8\", \"8.8.4.4\"]\n}\n"},
		{"equal values keep their bytes", `{"dns":["8.8.8.8","8.8.4.4"],"mtu":1500.0,"bip":"172.16.42.1/24","fixed-cidr":"172.16.42.0/24"}`,
			`{"dns":["8.8.8.8","8.8.4.4"],"mtu":1500.0,"bip":"172.16.42.1/24","fixed-cidr":"172.16.42.0/24"}`},
		{"nvidia-ctk layout", "{\n    \"runtimes\": {\n        \"nvidia\": {\n            \"args\": [],\n            \"path\": \"nvidia-container-runtime\"\n        }\n    }\n}",
			"{\n    \"runtimes\": {\n        \"nvidia\": {\n            \"args\": [],\n            \"path\": \"nvidia-container-runtime\"\n        }\n    },\n    \"bip\": \"172.16.42.1/24\",\n    \"fixed-cidr\": \"172.16.42.0/24\",\n    \"mtu\": 1500,\n    \"dns\": [\"8.8.8.8\", \"8.8.4.4\"]\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Merge([]byte(tc.existing), ours)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			again, err := Merge(got, ours)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("not stable: %v\n%s", err, again)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON:\n%s", got)
			}
		})
	}
}

func TestMergeRefuses(t *testing.T) {
	inv := inventory.Reference()
	ours := DaemonJSON(inv, host(inv, "clx-mld-41"))
	for _, tc := range []struct{ name, existing, wantErr string }{
		{"not JSON", "{\n  \"runtimes\": {,\n}", "line 2 col 16: not valid JSON"},
		{"trailing comma", `{"a": 1,}`, "not valid JSON"},
		{"comment", "// docker\n{}", "not valid JSON"},
		{"array", `["bip"]`, "top level is not a JSON object"},
		{"duplicate key", "{\n  \"bip\": \"172.16.41.1/24\",\n  \"bip\": \"172.16.9.1/24\"\n}", `line 3 col 3: key "bip" appears twice (first at line 2 col 3)`},
		{"nested duplicate", `{"runtimes": {"nvidia": {}, "nvidia": {}}}`, `key "nvidia" appears twice`},
		{"bridge", `{"bridge": "docker0"}`, `line 1 col 2: it sets "bridge": it is exclusive with "bip"`},
		{"hosts", `{"hosts": ["unix:///var/run/docker.sock"]}`, `it sets "hosts": it clashes with the -H fd://`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Merge([]byte(tc.existing), ours)
			if err == nil {
				t.Fatalf("no error; merged:\n%s", got)
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "existing daemon.json: ") {
				t.Errorf("error %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct{ doc, wantErr string }{
		{`{"bip": "172.16.41.1/24", "fixed-cidr": "172.16.41.128/25", "mtu": 9000, "dns": ["8.8.8.8"]}`, ""},
		{`{"bip": "172.16.41.0/24"}`, "network or broadcast"},
		{`{"bip": "172.16.41.255/24"}`, "network or broadcast"},
		{`{"bip": "172.16.41.1"}`, "not an IPv4 address with a prefix"},
		{`{"bip": "172.16.41.1/31"}`, "at most /30"},
		{`{"bip": "172.16.41.1/24", "fixed-cidr": "172.16.42.0/24"}`, "not inside bip's network"},
		{`{"fixed-cidr": "172.16.42.1/24"}`, "host bits set"},
		{`{"mtu": "9000"}`, "must be an integer"},
		{`{"mtu": 67}`, "outside 68–9216"},
		{`{"dns": "8.8.8.8"}`, "must be an array"},
		{`{"dns": ["foo"]}`, `"foo" is not an IP address`},
		{`{"allow-direct-routing": "yes"}`, "true or false"},
		{`{"default-runtime": "nvidia"}`, `"nvidia" is not in "runtimes"`},
		{`{"default-runtime": "nvidia", "runtimes": {"nvidia": {"path": "x"}}}`, ""},
		{`{"bridge": "docker0"}`, "exclusive"},
	} {
		err := Validate([]byte(tc.doc))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.doc, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", tc.doc, err, tc.wantErr)
		}
	}
}

func TestChangedKeys(t *testing.T) {
	got := ChangedKeys([]byte(`{"a":1,"b":[1, 2],"c":3}`), []byte(`{"a":1,"b":[1,2],"c":4,"d":5}`))
	if diff := cmp.Diff([]string{"c", "d"}, got); diff != "" {
		t.Error(diff)
	}
}

func TestFirewallReference41(t *testing.T) {
	inv := inventory.Reference()
	h := host(inv, "clx-mld-41")
	if diff := cmp.Diff("[172.16.42.0/23 172.16.44.0/22 172.16.48.0/24]", fmt.Sprint(FirewallSources(inv, h))); diff != "" {
		t.Errorf("sources: %s", diff)
	}
	rules := FirewallRules(inv, h)
	want := []string{
		"-A RDGGEN-CONTAINERS -s 172.16.42.0/23 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT",
		"-A RDGGEN-CONTAINERS -s 172.16.44.0/22 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT",
		"-A RDGGEN-CONTAINERS -s 172.16.48.0/24 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT",
		"-A RDGGEN-CONTAINERS -d 172.16.41.0/24 -i enp1f0 -o docker0 -m conntrack ! --ctstate RELATED,ESTABLISHED -j DROP",
	}
	if diff := cmp.Diff(want, rules); diff != "" {
		t.Errorf("filter rules: %s", diff)
	}
	nat := NATRules(inv, h)
	wantNAT := []string{
		"-A RDGGEN-POSTROUTING -s 172.16.41.0/24 -d 172.16.42.0/23 -j ACCEPT",
		"-A RDGGEN-POSTROUTING -s 172.16.41.0/24 -d 172.16.44.0/22 -j ACCEPT",
		"-A RDGGEN-POSTROUTING -s 172.16.41.0/24 -d 172.16.48.0/24 -j ACCEPT",
	}
	if diff := cmp.Diff(wantNAT, nat); diff != "" {
		t.Errorf("nat rules: %s", diff)
	}
	restore := string(FirewallRestore(inv, h))
	wantRestore := "*filter\n:RDGGEN-CONTAINERS - [0:0]\n" + strings.Join(rules, "\n") + "\nCOMMIT\n" +
		"*nat\n:RDGGEN-POSTROUTING - [0:0]\n" + strings.Join(nat, "\n") + "\nCOMMIT\n"
	if restore != wantRestore {
		t.Errorf("restore input:\n%s", restore)
	}
	script := string(FirewallScript(inv, h))
	for _, s := range []string{restore, "first_rule filter DOCKER-USER RDGGEN-CONTAINERS\n", "first_rule nat POSTROUTING RDGGEN-POSTROUTING\n"} {
		if !strings.Contains(script, s) {
			t.Errorf("firewall.sh lacks %q:\n%s", s, script)
		}
	}
	if !strings.Contains(string(RoutesScript(inv, h)), script[strings.Index(script, "# first_rule"):]) {
		t.Error("routes.sh does not do what firewall.sh does")
	}
}

// The firewall sources cover exactly the other hosts: every other host's
// address is inside one prefix, the host's own and no address outside the set is.
func TestSourcesExact(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8, 13, 64, 200} {
		var all []netip.Prefix
		set := map[netip.Addr]bool{}
		for i := 0; i < n; i++ {
			a := netip.AddrFrom4([4]byte{10, 0, 0, byte(3 + i)})
			all = append(all, netip.PrefixFrom(a, 32))
			set[a] = true
		}
		agg := aggregate(all)
		for skip := 0; skip < n; skip++ {
			got := without(agg, all[skip])
			for i := 1; i < len(got); i++ {
				if !got[i-1].Addr().Less(got[i].Addr()) {
					t.Fatalf("n=%d skip=%d: not sorted: %v", n, skip, got)
				}
			}
			if want := aggregate(append(slices.Clone(all[:skip]), all[skip+1:]...)); !slices.Equal(got, want) {
				t.Fatalf("n=%d skip=%d: without() = %v, aggregate of the rest = %v", n, skip, got, want)
			}
			for b := 0; b < 256; b++ {
				a := netip.AddrFrom4([4]byte{10, 0, 0, byte(b)})
				covered := false
				for _, p := range got {
					covered = covered || p.Contains(a)
				}
				want := set[a] && b != 3+skip
				if covered != want {
					t.Fatalf("n=%d skip=%d: %s covered=%v want %v (%v)", n, skip, a, covered, want, got)
				}
			}
		}
	}
}

func TestArtifactsLayout(t *testing.T) {
	inv := inventory.Reference()
	files := Artifacts(inv)
	if len(files) != 6*8 {
		t.Fatalf("%d files", len(files))
	}
	want := map[string]os.FileMode{
		"hosts/clx-mld-41/daemon.json":               0o644,
		"hosts/clx-mld-41/routes.sh":                 0o755,
		"hosts/clx-mld-41/60-rdggen-forwarding.conf": 0o644,
		"hosts/clx-mld-41/rdggen-routes":             0o755,
		"hosts/clx-mld-41/firewall.sh":               0o755,
		"hosts/clx-mld-41/rdggen-firewall.service":   0o644,
	}
	for _, f := range files {
		if m, ok := want[f.Path]; ok {
			if f.Mode != m {
				t.Errorf("%s: mode %o, want %o", f.Path, f.Mode, m)
			}
			delete(want, f.Path)
		}
		if len(f.Data) == 0 || f.Data[len(f.Data)-1] != '\n' {
			t.Errorf("%s does not end in a newline", f.Path)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing: %v", want)
	}
	// Artifacts and the single-host functions agree.
	h := host(inv, "clx-mld-45")
	for _, f := range files {
		switch f.Path {
		case "hosts/clx-mld-45/routes.sh":
			if !bytes.Equal(f.Data, RoutesScript(inv, h)) {
				t.Error("routes.sh differs from RoutesScript")
			}
		case "hosts/clx-mld-45/rdggen-routes":
			if !bytes.Equal(f.Data, RoutesPersist(inv, h)) {
				t.Error("rdggen-routes differs from RoutesPersist")
			}
		case "hosts/clx-mld-45/firewall.sh":
			if !bytes.Equal(f.Data, FirewallScript(inv, h)) {
				t.Error("firewall.sh differs from FirewallScript")
			}
		}
	}
}

// The shell artifacts parse (sh -n), when a shell is present.
func TestScriptsParse(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh in PATH")
	}
	inv := inventory.Reference()
	dir := t.TempDir()
	for _, f := range Artifacts(inv) {
		if !strings.HasSuffix(f.Path, ".sh") && !strings.HasSuffix(f.Path, "rdggen-routes") {
			continue
		}
		p := filepath.Join(dir, strings.ReplaceAll(f.Path, "/", "_"))
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(sh, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v\n%s", f.Path, err, out)
		}
	}
}
