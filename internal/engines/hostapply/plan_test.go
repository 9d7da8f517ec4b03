package hostapply

import (
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// goodState is host h exactly as desired: what a probe of a converged host
// returns.
func goodState(inv *inventory.Inventory, d *desired) *hostState {
	h := d.Host
	st := &hostState{Files: map[string]fileState{}}
	st.Files[dockernet.DaemonPath] = fileState{Kind: "file", Mode: 0o644, Data: d.Daemon}
	for _, f := range d.Files {
		st.Files[f.Path] = fileState{Kind: "file", Mode: f.Mode, Data: f.Data}
	}
	for _, l := range d.Links {
		st.Files[l.Path] = fileState{Kind: "link", Data: []byte(l.Target)}
	}
	for _, f := range d.Foreign {
		st.Files[f.Path] = fileState{Kind: "absent"}
	}
	st.Forwarding = cmdOut{0, "1\n"}
	st.Link = cmdOut{0, fmt.Sprintf("3: %s: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu %d qdisc mq state UP mode DEFAULT group default qlen 1000\\    link/ether 00:50:56:aa:bb:41 brd ff:ff:ff:ff:ff:ff\n", h.DataInterface, h.DataMTU)}
	st.Addr = cmdOut{0, fmt.Sprintf("3: %s    inet %s brd 31.31.31.255 scope global %s\\       valid_lft forever preferred_lft forever\n", h.DataInterface, h.Data.Address, h.DataInterface)}
	var routes strings.Builder
	fmt.Fprintf(&routes, "default via 10.0.0.1 dev eno0 proto dhcp src 10.0.0.41 metric 100\n")
	fmt.Fprintf(&routes, "%s dev docker0 proto kernel scope link src %s linkdown\n", h.Subnet, h.Bridge().Addr())
	for _, r := range d.Routes {
		fmt.Fprintf(&routes, "%s via %s dev %s \n", r.Dst, r.Via, r.Dev)
	}
	fmt.Fprintf(&routes, "%s dev %s proto kernel scope link src %s\n", h.Data.Address.Masked(), h.DataInterface, h.Data.Address.Addr())
	st.Routes = cmdOut{0, routes.String()}
	st.Chain = cmdOut{0, "-N " + dockernet.FirewallChain + "\n" + strings.Join(d.ChainRules, "\n") + "\n"}
	st.DockerUser = cmdOut{0, "-N DOCKER-USER\n" + dockernet.FirewallJump + "\n-A DOCKER-USER -j RETURN\n"}
	st.NAT = cmdOut{0, "-N " + dockernet.NATChain + "\n" + strings.Join(d.NATRules, "\n") + "\n"}
	st.Postrouting = cmdOut{0, "-P POSTROUTING ACCEPT\n" + dockernet.NATJump + "\n-A POSTROUTING -s 172.16.41.0/24 ! -o docker0 -j MASQUERADE\n"}
	st.Dockerd = cmdOut{0, "Docker version 18.09.7, build 2d0083d\n"}
	st.Docker0 = cmdOut{0, "5: docker0    inet " + h.Bridge().String() + " brd 172.16.41.255 scope global docker0\n"}
	st.RoCE = cmdOut{0, "rdggen-roce tcp_ecn ok 1\nrdggen-roce rdma_device n/a no RDMA device\nrdggen-roce pf_qos esxi not applicable on a VF\n"}
	st.Peermem = cmdOut{0, "loaded\nmemory_peers\nversion 535.183.06\nmodule\n"}
	return st
}

func TestPlanConvergedHostIsEmpty(t *testing.T) {
	inv := inventory.Reference()
	d := desiredFor(inv, &inv.Hosts[0])
	p, err := makePlan(inv, d, goodState(inv, d), planOpts{docker0: true, modules: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.empty() || len(p.changes()) != 0 || len(p.describe()) != 0 {
		t.Fatalf("converged host has a plan: %v", p.describe())
	}
}

func TestPlanDifferences(t *testing.T) {
	inv := inventory.Reference()
	h := &inv.Hosts[0] // clx-mld-41
	d := desiredFor(inv, h)
	for _, tc := range []struct {
		name   string
		change func(st *hostState)
		want   []string
	}{
		{"forwarding off", func(st *hostState) { st.Forwarding.Out = "0\n" },
			[]string{"~ net.ipv4.conf.all.forwarding: 0 -> 1"}},
		{"data interface at another MTU", func(st *hostState) { st.Link.Out = strings.Replace(st.Link.Out, "mtu 1500", "mtu 9000", 1) },
			[]string{"~ link enp1f0: mtu 9000 -> 1500"}},
		{"route via the wrong host and a stale one", func(st *hostState) {
			st.Routes.Out = strings.Replace(st.Routes.Out, "172.16.42.0/24 via 31.31.31.42", "172.16.42.0/24 via 31.31.31.43", 1) +
				"172.16.49.0/24 via 31.31.31.49 dev enp1f0 \n" + // a host that left
				"172.16.41.0/24 via 31.31.31.41 dev enp1f0 metric 5\n" // the guide's own-subnet slip
		}, []string{
			"~ route 172.16.42.0/24 via 31.31.31.42 dev enp1f0 (clx-mld-42; was 172.16.42.0/24 via 31.31.31.43 dev enp1f0)",
			"- route 172.16.49.0/24 via 31.31.31.49 dev enp1f0 (into the container pool, not in the inventory)",
			"- route 172.16.41.0/24 via 31.31.31.41 dev enp1f0 (into the container pool, not in the inventory)",
		}},
		{"missing routes", func(st *hostState) { st.Routes.Out = "" }, []string{
			"+ route 172.16.42.0/24 via 31.31.31.42 dev enp1f0 (clx-mld-42)",
			"+ route 172.16.43.0/24 via 31.31.31.43 dev enp1f0 (clx-mld-43)",
			"+ route 172.16.44.0/24 via 31.31.31.44 dev enp1f0 (clx-mld-44)",
			"+ route 172.16.45.0/24 via 31.31.31.45 dev enp1f0 (clx-mld-45)",
			"+ route 172.16.46.0/24 via 31.31.31.46 dev enp1f0 (clx-mld-46)",
			"+ route 172.16.47.0/24 via 31.31.31.47 dev enp1f0 (clx-mld-47)",
			"+ route 172.16.48.0/24 via 31.31.31.48 dev enp1f0 (clx-mld-48)",
		}},
		{"chains absent, no DOCKER-USER", func(st *hostState) {
			st.Chain = cmdOut{1, "iptables: No chain/target/match by that name.\n"}
			st.DockerUser = cmdOut{1, "iptables: No chain/target/match by that name.\n"}
			st.NAT = cmdOut{1, "iptables: No chain/target/match by that name.\n"}
			st.Postrouting.Out = "-P POSTROUTING ACCEPT\n"
		}, []string{
			"~ iptables filter chain RDGGEN-CONTAINERS: 4 rule(s), replaced as one block (was absent)",
			"~ iptables nat chain RDGGEN-POSTROUTING: 3 rule(s), replaced as one block (was absent)",
			"~ iptables filter chain DOCKER-USER: jump to RDGGEN-CONTAINERS as its first rule, once (was no chain DOCKER-USER)",
			"~ iptables nat chain POSTROUTING: jump to RDGGEN-POSTROUTING as its first rule, once (was absent)",
		}},
		{"a rule too many, jump twice", func(st *hostState) {
			st.Chain.Out += "-A RDGGEN-CONTAINERS -j ACCEPT\n"
			st.DockerUser.Out = "-N DOCKER-USER\n" + dockernet.FirewallJump + "\n" + dockernet.FirewallJump + "\n-A DOCKER-USER -j RETURN\n"
		}, []string{
			"~ iptables filter chain RDGGEN-CONTAINERS: 4 rule(s), replaced as one block (was 5 rule(s))",
			"~ iptables filter chain DOCKER-USER: jump to RDGGEN-CONTAINERS as its first rule, once (was 2 copies)",
		}},
		{"jump after a user rule", func(st *hostState) {
			st.DockerUser.Out = "-N DOCKER-USER\n-A DOCKER-USER -s 10.9.0.0/16 -j DROP\n" + dockernet.FirewallJump + "\n"
		}, []string{`~ iptables filter chain DOCKER-USER: jump to RDGGEN-CONTAINERS as its first rule, once (was rule 2, after "-A DOCKER-USER -s 10.9.0.0/16 -j DROP")`}},
		{"docker restarted: its MASQUERADE above the exemption", func(st *hostState) {
			st.Postrouting.Out = "-P POSTROUTING ACCEPT\n-A POSTROUTING -s 172.16.41.0/24 ! -o docker0 -j MASQUERADE\n" + dockernet.NATJump + "\n"
		}, []string{`~ iptables nat chain POSTROUTING: jump to RDGGEN-POSTROUTING as its first rule, once (was rule 2, after "-A POSTROUTING -s 172.16.41.0/24 ! -o docker0 -j MASQUERADE")`}},
		{"former firewall.rules of rdggen", func(st *hostState) {
			st.Files[dockernet.FormerFirewallRulesPath] = fileState{Kind: "file", Mode: 0o644, Data: []byte("# rdggen: clx-mld-41's chain RDGGEN-CONTAINERS\n*filter\nCOMMIT\n")}
		}, []string{"- /etc/rdggen/firewall.rules (rdggen's former firewall file, replaced by /etc/rdggen/firewall.sh)"}},
		{"daemon.json from nvidia-docker2", func(st *hostState) {
			st.Files[dockernet.DaemonPath] = fileState{Kind: "file", Mode: 0o644, Data: []byte(`{"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}}, "bip": "172.17.0.1/16"}`)}
		}, []string{"~ /etc/docker/daemon.json: set bip, fixed-cidr, mtu, dns; keeps runtimes (validate, backup, restart docker)"}},
		{"no daemon.json", func(st *hostState) { st.Files[dockernet.DaemonPath] = fileState{Kind: "absent"} },
			[]string{"+ /etc/docker/daemon.json: new file with bip, fixed-cidr, mtu, dns (validate, restart docker)"}},
		{"docker0 not restarted since", func(st *hostState) { st.Docker0.Out = "5: docker0    inet 172.17.0.1/16 scope global docker0\n" },
			[]string{"~ restart docker: docker0 has [172.17.0.1/16], daemon.json says bip 172.16.41.1/24"}},
		{"tcp_ecn", func(st *hostState) { st.RoCE.Out = "rdggen-roce tcp_ecn differs 2 -> 1\n" },
			[]string{"~ roce tcp_ecn: 2 -> 1"}},
		{"files: changed, wrong mode, unit missing", func(st *hostState) {
			st.Files[dockernet.SysctlPath] = fileState{Kind: "file", Mode: 0o644, Data: []byte("net.ipv4.ip_forward = 1\n")}
			f := st.Files[dockernet.IfupdownHookPath]
			f.Mode = 0o644
			st.Files[dockernet.IfupdownHookPath] = f
			st.Files[dockernet.FirewallUnitPath] = fileState{Kind: "absent"}
			st.Files[dockernet.FirewallWantsPath] = fileState{Kind: "link", Data: []byte("/lib/systemd/system/other.service")}
		}, []string{
			"~ /etc/sysctl.d/60-rdggen-forwarding.conf",
			"~ /etc/network/if-up.d/rdggen-routes",
			"+ /etc/systemd/system/rdggen-firewall.service",
			"+ /etc/systemd/system/docker.service.wants/rdggen-firewall.service -> /etc/systemd/system/rdggen-firewall.service",
			"~ systemd: daemon-reload (units changed)",
		}},
		{"nvidia-peermem installed, not loaded", func(st *hostState) { st.Peermem.Out = "memory_peers\nmodule\n" },
			[]string{"~ kernel module nvidia_peermem: load (modprobe nvidia-peermem), for GPUDirect RDMA"}},
		{"nvidia-peermem not installed: nothing to load", func(st *hostState) { st.Peermem.Out = "" }, []string{}},
		{"nvidia-peermem not installed: its modules-load.d file is not installed", func(st *hostState) {
			st.Peermem.Out = ""
			st.Files["/etc/modules-load.d/60-rdggen-nvidia-peermem.conf"] = fileState{Kind: "absent"}
		}, []string{}},
		{"nvidia-peermem not installed: an older modules-load.d file is not rewritten", func(st *hostState) {
			st.Peermem.Out = "memory_peers\n"
			st.Files["/etc/modules-load.d/60-rdggen-nvidia-peermem.conf"] = fileState{Kind: "file", Mode: 0o644, Data: []byte("# rdggen: older\nnvidia-peermem\n")}
		}, []string{}},
		{"its modules-load.d file missing", func(st *hostState) {
			st.Files["/etc/modules-load.d/60-rdggen-nvidia-peermem.conf"] = fileState{Kind: "absent"}
		},
			[]string{"+ /etc/modules-load.d/60-rdggen-nvidia-peermem.conf"}},
		{"nv_peer_mem in use: neither loaded nor persisted", func(st *hostState) {
			st.Peermem.Out = "legacy\nmemory_peers\n"
			st.Files["/etc/modules-load.d/60-rdggen-nvidia-peermem.conf"] = fileState{Kind: "absent"}
		}, []string{}},
		{"netplan leftover of rdggen", func(st *hostState) {
			st.Files[dockernet.NetplanPath] = fileState{Kind: "file", Mode: 0o600, Data: []byte("# rdggen: persistent routes of clx-mld-41\nnetwork: {}\n")}
		}, []string{"- /etc/netplan/60-rdggen.yaml (rdggen's routes for another OS form)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := goodState(inv, d)
			tc.change(st)
			p, err := makePlan(inv, d, st, planOpts{docker0: true, modules: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, p.describe()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanRefuses(t *testing.T) {
	inv := inventory.Reference()
	d := desiredFor(inv, &inv.Hosts[0])
	for _, tc := range []struct {
		name    string
		change  func(st *hostState)
		wantErr string
	}{
		{"daemon.json not JSON", func(st *hostState) {
			st.Files[dockernet.DaemonPath] = fileState{Kind: "file", Mode: 0o644, Data: []byte("{\"runtimes\": {}\n")}
		}, "/etc/docker/daemon.json: line 1 col 16: not valid JSON: unexpected end of JSON input; the file was not changed"},
		{"daemon.json with bridge", func(st *hostState) {
			st.Files[dockernet.DaemonPath] = fileState{Kind: "file", Mode: 0o644, Data: []byte(`{"bridge": "br0"}`)}
		}, `/etc/docker/daemon.json: line 1 col 2: it sets "bridge"`},
		{"default runtime missing", func(st *hostState) {
			st.Files[dockernet.DaemonPath] = fileState{Kind: "file", Mode: 0o644, Data: []byte(`{"default-runtime": "nvidia"}`)}
		}, `the merged file would not be valid, so it was not installed: "default-runtime": "nvidia" is not in "runtimes"`},
		{"data address missing", func(st *hostState) { st.Addr.Out = "3: enp1f0    inet 10.1.1.1/24 scope global enp1f0\n" },
			"data interface enp1f0 does not carry 31.31.31.41/24 (hosts[0].data.address; it has [10.1.1.1/24])"},
		{"no data interface", func(st *hostState) { st.Addr = cmdOut{1, "Device \"enp1f0\" does not exist.\n"} },
			`data interface enp1f0: Device "enp1f0" does not exist.`},
		{"a directory where a file goes", func(st *hostState) { st.Files[dockernet.SysctlPath] = fileState{Kind: "other"} },
			"/etc/sysctl.d/60-rdggen-forwarding.conf is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := goodState(inv, d)
			tc.change(st)
			_, err := makePlan(inv, d, st, planOpts{docker0: true, modules: true})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestPlanNotes(t *testing.T) {
	inv := inventory.Reference()
	d := desiredFor(inv, &inv.Hosts[0])
	st := goodState(inv, d)
	st.Dockerd.Out = "Docker version 28.3.2, build 578ccf6\n"
	st.Files[dockernet.NetplanPath] = fileState{Kind: "file", Mode: 0o600, Data: []byte("network: {version: 2}\n")}
	p, err := makePlan(inv, d, st, planOpts{docker0: true, modules: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/etc/netplan/60-rdggen.yaml exists but was not written by rdggen: left alone",
		`dockerd is 28.3.2 but the inventory says docker.version 18.09: without "allow-direct-routing" Docker ≥ 28.2 drops routed traffic to containers; set docker.version`,
	}
	if diff := cmp.Diff(want, p.notes); diff != "" {
		t.Error(diff)
	}
}

// What the plan says about nvidia-peermem where it loads nothing.
func TestPlanPeermemNotes(t *testing.T) {
	inv := inventory.Reference()
	d := desiredFor(inv, &inv.Hosts[0])
	for _, tc := range []struct {
		name, probe string
		modules     bool
		absent      bool // no modules-load.d file on the VM
		want        string
	}{
		{"not installed", "", true, true, "nvidia-peermem is not installed (NVIDIA driver < 470, or none yet): GPUDirect RDMA needs it. " +
			"Install the NVIDIA driver ≥ 470 (it ships nvidia-peermem) after MLNX_OFED, then rdggen apply --target hosts again: it loads the module and writes /etc/modules-load.d/60-rdggen-nvidia-peermem.conf, " +
			"which it leaves out until then (systemd-modules-load would fail at every boot)"},
		{"not installed, with the file of an earlier apply", "", true, false, "nvidia-peermem is not installed (NVIDIA driver < 470, or none yet): GPUDirect RDMA needs it. " +
			"Install the NVIDIA driver ≥ 470 (it ships nvidia-peermem) after MLNX_OFED, then rdggen apply --target hosts again: it loads the module and keeps /etc/modules-load.d/60-rdggen-nvidia-peermem.conf, " +
			"which makes systemd-modules-load fail at every boot until the module is installed (remove the file if it will not be)"},
		{"loading off", "module\n", false, false, "nvidia-peermem is installed but not loaded, and loading is off (--module-load none or --host-root): load it with modprobe nvidia-peermem"},
		{"nv_peer_mem", "legacy\n", true, true, "nv_peer_mem (the peer-memory module of NVIDIA drivers before R470) is loaded: rdggen neither loads nvidia-peermem nor writes /etc/modules-load.d/60-rdggen-nvidia-peermem.conf (only one of them may be loaded)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := goodState(inv, d)
			st.Peermem.Out = tc.probe
			if tc.absent {
				st.Files["/etc/modules-load.d/60-rdggen-nvidia-peermem.conf"] = fileState{Kind: "absent"}
			}
			p, err := makePlan(inv, d, st, planOpts{docker0: true, modules: tc.modules})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.want}, p.notes); diff != "" || !p.empty() {
				t.Errorf("notes (-want +got):\n%s\nchanges: %v", diff, p.describe())
			}
		})
	}
}

func TestParseRoutes(t *testing.T) {
	got := parseRoutes(`default via 10.0.0.1 dev eno0 proto dhcp src 10.0.0.41 metric 100
blackhole 10.9.0.0/16
172.16.42.0/24 via 31.31.31.42 dev enp1f0
10.1.2.3 via 10.0.0.9 dev eno0
192.168.0.0/16 proto static
	nexthop via 10.0.0.2 dev eno0 weight 1
unicast 172.16.43.0/24 via 31.31.31.43 dev enp1f0 proto static
`)
	want := []routeEntry{
		{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParseAddr("10.0.0.1"), "eno0"},
		{netip.MustParsePrefix("172.16.42.0/24"), netip.MustParseAddr("31.31.31.42"), "enp1f0"},
		{netip.MustParsePrefix("10.1.2.3/32"), netip.MustParseAddr("10.0.0.9"), "eno0"},
		{netip.MustParsePrefix("192.168.0.0/16"), netip.Addr{}, ""},
		{netip.MustParsePrefix("172.16.43.0/24"), netip.MustParseAddr("31.31.31.43"), "enp1f0"},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b }), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Error(diff)
	}
}

// check on a VM without nvidia-peermem: its modules-load.d file, which apply
// leaves out there, is no failure of the files check, nor counted as
// generated.
func TestCheckFilesWithoutPeermem(t *testing.T) {
	inv := inventory.Reference()
	h := &inv.Hosts[0]
	d := desiredFor(inv, h)
	st := goodState(inv, d)
	st.Peermem.Out = ""
	st.Files["/etc/modules-load.d/60-rdggen-nvidia-peermem.conf"] = fileState{Kind: "absent"}
	var files *readiness.Result
	for _, r := range checkConfig(inv, h, d, st, planOpts{docker0: true, modules: true}) {
		if r.Status != readiness.Passed {
			t.Errorf("%s", r.Line())
		}
		if r.Check == CheckFiles {
			files = &r
		}
	}
	want := fmt.Sprintf("%d file(s) and link(s) as generated", len(d.Files)-1+len(d.Links))
	if files == nil || files.Found != want {
		t.Errorf("files check %+v, want found %q", files, want)
	}
}

// A fabric host has 1 + (leaves − 1) routes: the pool and each other
// leaf's data subnet, all via its leaf's gateway; the routes check names
// them all.
func TestRoutesFoundFabric(t *testing.T) {
	inv := loadGolden(t, "fabric-cumulus")
	h := &inv.Hosts[0]
	d := desiredFor(inv, h)
	if len(d.Routes) != 2 {
		t.Fatalf("%d routes, want 2 (pool + leaf2's subnet): %+v", len(d.Routes), d.Routes)
	}
	got := routesFound(inv, d, h)
	want := "the container pool 172.16.0.0/16 via 10.1.1.254 (the container pool, routed by leaf leaf1) on enp1f0, and the other leaves' data subnets 10.1.2.0/24 via 10.1.1.254"
	if got != want {
		t.Errorf("routes found:\n got %s\nwant %s", got, want)
	}
}

func loadGolden(t *testing.T, name string) *inventory.Inventory {
	t.Helper()
	p := "../../../testdata/golden/" + name + "/inventory.yaml"
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(p, src)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}
