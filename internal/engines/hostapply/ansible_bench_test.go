package hostapply

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/dockernet"
)

// BenchmarkAnsible32 is BenchmarkApplyHosts32's comparison: the same work
// done by Ansible (testdata/ansible/playbook.yml, Debian's ansible package)
// on the same kind of 32 namespace hosts, with the same parallelism, checked
// the same way afterwards (every container pair answers from its own
// address). Without ansible-playbook (Debian's ansible, which .ci/run does
// not install: no test depends on it) it is skipped, and fails under
// CI=true as every missing prerequisite does. Run with
//
//	go test ./internal/engines/hostapply -run '^$' -bench 'ApplyHosts32|Ansible32' -benchtime 1x -timeout 0
//
// (Ansible takes minutes: without -timeout 0, go test's 10-minute limit ends it.)
func BenchmarkAnsible32(b *testing.B) {
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		netnstest.Unavailable(b, "ansible-playbook not installed (apt-get install ansible); nothing to compare with")
	}
	const n = 32
	cfg, err := filepath.Abs("testdata/ansible/ansible.cfg")
	if err != nil {
		b.Fatal(err)
	}
	playbook := filepath.Join(filepath.Dir(cfg), "playbook.yml")
	var first, noop time.Duration
	var tripsFirst, tripsNoop float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := netnstest.New(b, netnstest.Options{Hosts: n, OS: func(i int) string {
			if i%2 == 0 {
				return "ubuntu-16.04"
			}
			return "ubuntu-20.04"
		}})
		inv := writeAnsibleInventory(b, c)
		home := filepath.Join(c.Dir, "ansible-home")
		play := func() (time.Duration, string) {
			cmd := exec.Command("ansible-playbook", "-f", fmt.Sprint(benchParallel()), "-i", inv, playbook)
			cmd.Env = append(os.Environ(), "ANSIBLE_CONFIG="+cfg, "ANSIBLE_HOME="+home, "ANSIBLE_LOCAL_TEMP="+home+"/tmp",
				"ANSIBLE_SSH_CONTROL_PATH_DIR="+home+"/cp", "ANSIBLE_NOCOLOR=1")
			t0 := time.Now()
			out, err := cmd.CombinedOutput()
			d := time.Since(t0)
			if err != nil {
				b.Fatalf("ansible-playbook: %v\n%s", err, out)
			}
			return d, string(out)
		}
		b.StartTimer()
		d1, _ := play()
		first += d1
		b.StopTimer()
		s1 := allSessions(c)
		if _, failed := c.Reachability(context.Background()); len(failed) != 0 {
			to := map[int]int{}
			for _, p := range failed {
				to[p.To]++
			}
			for i, k := range to {
				st, _ := c.Exec(c.Hosts[i].NS, "sh", "-c", "iptables-save; ip -4 route; ip -4 addr show docker0; sysctl net.ipv4.conf.all.forwarding")
				b.Logf("%s: %d senders fail:\n%s", c.Hosts[i].Name, k, st)
			}
			b.Fatalf("after Ansible, %d container pairs do not answer", len(failed))
		}
		b.StartTimer()
		d, out := play()
		noop += d
		b.StopTimer()
		if changed := regexp.MustCompile(`changed=[1-9]`).FindString(out); changed != "" {
			b.Errorf("Ansible's second run changed something:\n%s", out)
		}
		tripsFirst += float64(s1) / n
		tripsNoop += float64(allSessions(c)-s1) / n
		b.Logf("Ansible on %d hosts: first run %.1fs (%d sessions), second run %.1fs (%d sessions)",
			n, d1.Seconds(), s1, d.Seconds(), allSessions(c)-s1)
		b.StartTimer()
	}
	b.ReportMetric(first.Seconds()/float64(b.N), "s-first")
	b.ReportMetric(noop.Seconds()/float64(b.N), "s-noop")
	b.ReportMetric(tripsFirst/float64(b.N), "sessions/host-first")
	b.ReportMetric(tripsNoop/float64(b.N), "sessions/host-noop")
}

// allSessions counts every SSH session (commands and sftp/scp transfers).
func allSessions(c *netnstest.Cluster) int {
	total := 0
	for _, h := range c.Hosts {
		b, _ := os.ReadFile(h.SSHDLog)
		total += strings.Count(string(b), "Starting session:")
	}
	return total
}

// writeAnsibleInventory writes the playbook's inventory: every value from
// the same functions rdggen's apply uses.
func writeAnsibleInventory(b *testing.B, c *netnstest.Cluster) string {
	inv := c.Inventory
	hosts := map[string]any{}
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		d := desiredFor(inv, h)
		root := filepath.Join(c.Dir, "roots", h.Name)
		settings := map[string]any{}
		for _, s := range dockernet.DaemonSettings(inv, h) {
			var v any
			if err := json.Unmarshal(s.Value, &v); err != nil {
				b.Fatal(err)
			}
			settings[s.Key] = v
		}
		var sources []string
		for _, p := range dockernet.FirewallSources(inv, h) {
			sources = append(sources, p.String())
		}
		var routes []map[string]string
		for _, r := range d.Routes {
			routes = append(routes, map[string]string{"dst": r.Dst.String(), "via": r.Via.String()})
		}
		var files []map[string]string
		dirs := map[string]bool{"/etc/docker": true}
		for _, f := range d.Files {
			files = append(files, map[string]string{"path": f.Path, "mode": fmt.Sprintf("0%o", f.Mode), "content": string(f.Data)})
			dirs[filepath.Dir(f.Path)] = true
		}
		var links []map[string]string
		for _, l := range d.Links {
			links = append(links, map[string]string{"path": l.Path, "target": l.Target})
			dirs[filepath.Dir(l.Path)] = true
		}
		var dirList []string
		for d := range dirs {
			dirList = append(dirList, d)
		}
		hosts[h.Name] = map[string]any{
			"ansible_host":                 h.Mgmt,
			"ansible_user":                 "root",
			"ansible_ssh_private_key_file": c.Identity,
			"ansible_ssh_common_args":      "-o UserKnownHostsFile=" + c.KnownHosts + " -o StrictHostKeyChecking=yes",
			"ansible_remote_tmp":           root + "/.ansible-tmp",
			"root":                         root,
			"iface":                        h.DataInterface,
			"subnet":                       h.Subnet.String(),
			"dirs":                         dirList,
			"daemon_settings":              settings,
			"validate_cmd":                 "grep -q bip %s",
			"restart_cmd":                  c.DockerRestartCommand(),
			"firewall_sources":             sources,
			"drop_rule":                    strings.TrimPrefix(d.ChainRules[len(d.ChainRules)-1], "-A "+dockernet.FirewallChain+" "),
			"mtu":                          h.DataMTU,
			"routes":                       routes,
			"files":                        files,
			"links":                        links,
		}
	}
	doc, err := json.MarshalIndent(map[string]any{"all": map[string]any{"hosts": hosts}}, "", " ")
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(c.Dir, "inventory.json")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}
