package inventory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Warnings are findings in shape (file:line:col: path: text) on a valid
// inventory, from Load and Build alike.
func TestWarnings(t *testing.T) {
	const unused = "10.0.0.100 is not used with routing: hosts (the default), where every host routes to the others itself: set docker.routing: switch to route the pool through it, or remove the key"
	for _, tc := range []struct {
		name string
		src  string
		want []string // warnings' String(), prefixes
	}{
		{"none", baseYAML, nil},
		{"gateway with routing: hosts", strings.Replace(baseYAML, "  mtu: 1500", "  mtu: 1500\n  gateway: 10.0.0.100", 1),
			[]string{"mini.yaml:6:12: docker.gateway: " + unused}},
		{"gateway with routing: switch", strings.Replace(baseYAML, "  mtu: 1500", "  mtu: 1500\n  routing: switch\n  gateway: 10.0.0.100", 1), nil},
		{"gateway with routing: hosts written", strings.Replace(baseYAML, "  mtu: 1500", "  mtu: 1500\n  routing: hosts\n  gateway: 10.0.0.100", 1),
			[]string{"mini.yaml:7:12: docker.gateway: " + unused}},
		{"torchrun key with launcher horovod", strings.Replace(baseYAML, "docker:\n", "horovod: {nproc_per_node: 1}\ndocker:\n", 1),
			[]string{"mini.yaml:4:27: horovod.nproc_per_node: only torchrun reads it, and horovod.launcher is horovod: it has no effect"}},
		{"more torchrun processes than GPUs", strings.Replace(baseYAML, "docker:\n", "horovod: {launcher: torchrun, nproc_per_node: 3}\ndocker:\n", 1),
			[]string{"mini.yaml:4:47: horovod.nproc_per_node: 3 processes per worker, but a has 1 GPU(s)"}},
		{"docker.mtu below data_mtu", strings.Replace(baseYAML, "  nic:", "  data_mtu: 9000\n  nic:", 1),
			[]string{"mini.yaml:5:8: docker.mtu: 1500 is below data_mtu 9000 (hosts[0] and the others): docker0 and the bridge-mode workers stay at 1500 bytes while the data link carries 9000; leave docker.mtu out to follow data_mtu, or set it to 9000"}},
		{"docker.mtu left out follows data_mtu", strings.Replace(strings.Replace(baseYAML, "  nic:", "  data_mtu: 9000\n  nic:", 1), "  mtu: 1500\n", "", 1), nil},
		{"docker.mtu below data_mtu with host networking", strings.Replace(strings.Replace(baseYAML, "  nic:", "  data_mtu: 9000\n  nic:", 1), "docker:\n", "horovod: {network: host}\ndocker:\n", 1), nil},
		{"torchrun processes within the GPUs", strings.Replace(baseYAML, "docker:\n", "horovod: {launcher: torchrun, nproc_per_node: 1}\ndocker:\n", 1), nil},
		{"per-host routes at 2,048 hosts", string(scaleYAML(2048, false)), nil},
		{"per-host routes at 2,049 hosts", string(scaleYAML(2049, false)), []string{
			"scale.yaml:37:9: docker.routing: routing: hosts with 2049 hosts gives every host 2048 routes to the other hosts' container subnets (and as many NAT exemptions and firewall rules): the generated tree is about 545 MB, and it grows with the square of the hosts. With docker.routing: switch each host has one route and the tree is about 29 MB (the switch then routes the pool: every data port on one switch)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "mini.yaml"
			if strings.HasPrefix(tc.src, "name: scale") {
				file = "scale.yaml"
			}
			inv, err := Load(file, []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if len(inv.Warnings) != len(tc.want) {
				t.Fatalf("%d warnings, want %d: %v", len(inv.Warnings), len(tc.want), inv.Warnings)
			}
			for i, w := range inv.Warnings {
				if !strings.HasPrefix(w.String(), tc.want[i]) {
					t.Errorf("warning %d:\n%s\nwant prefix\n%s", i, w, tc.want[i])
				}
			}
			// Build warns alike, without a position.
			var s Spec
			if err := yaml.Unmarshal([]byte(tc.src), &s); err != nil {
				t.Fatal(err)
			}
			built, err := Build(file, &s)
			if err != nil {
				t.Fatal(err)
			}
			if len(built.Warnings) != len(inv.Warnings) {
				t.Fatalf("Build: %d warnings, Load %d", len(built.Warnings), len(inv.Warnings))
			}
			for i, w := range built.Warnings {
				if l := inv.Warnings[i]; w.Path != l.Path || w.Rule != l.Rule || w.Pos != (Pos{}) {
					t.Errorf("Build's warning %v, Load's %v", w, l)
				}
			}
		})
	}
}

// The estimate the scale warning quotes: 12 GB at 10,000 hosts with
// per-host routes (what the tree measured), 140 MB with the routed pool.
func TestEstimateTreeBytes(t *testing.T) {
	for _, tc := range []struct {
		n       int
		routing RoutingMode
		want    string
	}{{10000, RoutingHosts, "12 GB"}, {10000, RoutingSwitch, "140 MB"}, {4096, RoutingHosts, "2.1 GB"}, {1024, RoutingHosts, "146 MB"}, {0, RoutingHosts, "0 KB"}} {
		if got := approxBytes(EstimateTreeBytes(tc.n, tc.routing)); got != tc.want {
			t.Errorf("%d hosts, routing %s: %s, want %s", tc.n, tc.routing, got, tc.want)
		}
	}
}

// An http:// vCenter is a finding unless the load allows it; Load,
// LoadFile and Build take the option alike.
func TestAllowHTTPVCenter(t *testing.T) {
	src := []byte(strings.Replace(baseYAML, "name: mini\n", "name: mini\nvcenter: http://vc.example/sdk\n", 1))
	if _, err := Load("mini.yaml", src); err == nil || !strings.Contains(err.Error(), "--vcenter-allow-http") {
		t.Errorf("without the option: %v", err)
	}
	if _, err := Load("mini.yaml", src, AllowHTTPVCenter()); err != nil {
		t.Errorf("Load with the option: %v", err)
	}
	path := filepath.Join(t.TempDir(), "mini.yaml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil {
		t.Error("LoadFile accepted http:// without the option")
	}
	if inv, err := LoadFile(path, AllowHTTPVCenter()); err != nil || inv.VCenter != "http://vc.example/sdk" {
		t.Errorf("LoadFile with the option: %v", err)
	}
	var s Spec
	if err := yaml.Unmarshal(src, &s); err != nil {
		t.Fatal(err)
	}
	if _, err := Build("mini", &s); err == nil {
		t.Error("Build accepted http:// without the option")
	}
	if _, err := Build("mini", &s, AllowHTTPVCenter()); err != nil {
		t.Errorf("Build with the option: %v", err)
	}
	if _, err := Build("mini", nil); err == nil || err.Error() != "mini: no inventory (a nil *Spec)" {
		t.Errorf("nil Spec: %v", err)
	}
}

// The one grammar of a vCenter URL (govc's, with rdggen's address rules).
func TestParseVCenterURL(t *testing.T) {
	for _, tc := range []struct {
		in    string
		creds bool
		want  string // the URL, or the error's text
	}{
		{"vc.example", false, "https://vc.example/sdk"},
		{"https://vc.example/sdk", false, "https://vc.example/sdk"},
		{"https://vc.example/", false, "https://vc.example/sdk"},
		{"http://10.0.0.5:8080/sdk", false, "http://10.0.0.5:8080/sdk"},
		{"https://[fd00::5]/sdk", false, "https://[fd00::5]/sdk"},
		{"admin:pw@vc.example", true, "https://admin:pw@vc.example/sdk"},
		{"admin:pw@vc.example", false, "must not carry credentials; set GOVC_USERNAME and GOVC_PASSWORD instead"},
		{"https://root:s3cret@vc.example/sdk", false, "must not carry credentials; set GOVC_USERNAME and GOVC_PASSWORD instead"},
		{"ftp://vc.example", false, `"ftp://vc.example": a vCenter URL is https:// (or http://), not ftp://`},
		{"file:///etc/passwd", false, `"file:///etc/passwd" is not a vSphere SDK URL like https://vcenter.example/sdk ([https://]host[:port][/path])`},
		{"", false, `"" is not a vSphere SDK URL like https://vcenter.example/sdk ([https://]host[:port][/path])`},
		{"https://vc.example:0/sdk", false, `"https://vc.example:0/sdk": vc.example:0 is not a host name or a reachable IP address, optionally with a port 1–65535`},
		{"https://vc.example:/sdk", false, `"https://vc.example:/sdk": vc.example: is not a host name or a reachable IP address, optionally with a port 1–65535`},
		{"https://224.0.0.1/sdk", false, `"https://224.0.0.1/sdk": 224.0.0.1 is not a host name or a reachable IP address, optionally with a port 1–65535`},
		{"https://[10.0.0.1]/sdk", false, `"https://[10.0.0.1]/sdk" is not a vSphere SDK URL like https://vcenter.example/sdk ([https://]host[:port][/path])`},
		{"https://vc.example/sdk#x", false, `"https://vc.example/sdk#x": a vSphere SDK URL has no query or fragment`},
		{"https://u:pw@-x/sdk", true, `"https://xxxxx@-x/sdk": -x is not a host name or a reachable IP address, optionally with a port 1–65535`},
	} {
		u, err := ParseVCenterURL(tc.in, tc.creds)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = u.String()
		}
		if got != tc.want {
			t.Errorf("ParseVCenterURL(%q, %v) = %s\nwant %s", tc.in, tc.creds, got, tc.want)
		}
		if errors.Is(err, ErrVCenterCredentials) != strings.HasPrefix(tc.want, "must not carry") {
			t.Errorf("%q: errors.Is(ErrVCenterCredentials) = %v", tc.in, !strings.HasPrefix(tc.want, "must not carry"))
		}
	}
}

// A template with cloud-init on Ubuntu 16.04, whose cloud-init has no
// VMware datasource, is refused at the template's cloud_init (or the
// template, when the key is not written), once per template; 18.04 and
// cloud_init: false are valid.
func TestTemplateCloudInitOS(t *testing.T) {
	const rule = `template "t1" runs cloud-init, but ubuntu-16.04 (a's os) has none with the VMware datasource (cloud-init 21.3, backported to Ubuntu 18.04 and later, never 16.04): the clone would keep the template's identity. Use an 18.04+ template and os, or set cloud_init: false (docs/inventory.md#template-prerequisites)`
	old := strings.Replace(baseYAML, "os: ubuntu-18.04", "os: ubuntu-16.04", 1)
	for _, tc := range []struct {
		name, src, want string
	}{
		{"16.04, cloud_init by default", strings.Replace(old, "vfs: 8}\n", "vfs: 8}\n  template: {name: t1}\n", 1), "mini.yaml:12:13: defaults.template.cloud_init: " + rule},
		{"16.04, cloud_init written", strings.Replace(old, "vfs: 8}\n", "vfs: 8}\n  template:\n    name: t1\n    cloud_init: true\n", 1), "mini.yaml:14:17: defaults.template.cloud_init: " + rule},
		{"16.04, a host's own template", strings.Replace(old, "    esxi: esx-a\n", "    esxi: esx-a\n    template: {name: t1}\n", 1), "mini.yaml:15:15: hosts[0].template.cloud_init: " + rule},
		{"16.04 without cloud-init", strings.Replace(old, "vfs: 8}\n", "vfs: 8}\n  template: {name: t1, cloud_init: false}\n", 1), ""},
		{"18.04", strings.Replace(baseYAML, "vfs: 8}\n", "vfs: 8}\n  template: {name: t1}\n", 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("mini.yaml", []byte(tc.src))
			var rep *Report
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want == "":
			case !errors.As(err, &rep) || len(rep.Findings) != 1 || rep.Findings[0].String() != tc.want:
				t.Errorf("got %v\nwant %q (once per template)", err, tc.want)
			}
		})
	}
}
