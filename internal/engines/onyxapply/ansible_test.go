package onyxapply

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// TestCompareAnsibleOnyxConfig runs Ansible's mellanox.onyx onyx_config
// (Debian's ansible package) twice against the simulator with the same
// commands rdggen sends, next to rdggen's own two runs, and logs how many
// commands each second run sends. It is a measurement (apply against the usual tool), not a
// requirement: it runs only with RDGGEN_ANSIBLE=1 and ansible-playbook on PATH.
func TestCompareAnsibleOnyxConfig(t *testing.T) {
	if os.Getenv("RDGGEN_ANSIBLE") != "1" {
		t.Skip("set RDGGEN_ANSIBLE=1 (needs Debian's ansible and python3-paramiko)")
	}
	playbook, err := exec.LookPath("ansible-playbook")
	if err != nil {
		t.Skip(err)
	}
	inv := loadInv(t, [3]string{"s1", "SN2700", "3.6.8190"})
	r := newRig(t, inv, onyxsim.Options{Seed: unrelated})
	for run := 1; run <= 2; run++ {
		res, err := r.run(t)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("rdggen apply run %d: %d command(s) sent, switch received %d", run, res[0].Sent, len(r.sims[0].Received()))
	}
	// A second switch with the same start for Ansible.
	r = newRig(t, loadInv(t, [3]string{"s1", "SN2700", "3.6.8190"}), onyxsim.Options{Seed: unrelated})
	sim := r.sims[0]
	var lines []string
	for _, c := range onyx.Diff(onyx.Desired(inv, inv.Switches[0]), nil).Commands() {
		lines = append(lines, fmt.Sprintf("          - %q", c))
	}
	dir := t.TempDir()
	host, port, _ := strings.Cut(sim.Addr, ":")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hosts := write("hosts", fmt.Sprintf("sim ansible_host=%s ansible_port=%s ansible_user=admin ansible_password=admin "+
		"ansible_connection=ansible.netcommon.network_cli ansible_network_os=mellanox.onyx.onyx "+
		"ansible_become=yes ansible_become_method=enable\n", host, port))
	book := write("play.yml", `- hosts: sim
  gather_facts: no
  tasks:
    - mellanox.onyx.onyx_config:
        lines:
`+strings.Join(lines, "\n")+`
      register: r
    - debug: {var: r.updates}
`)
	// Debian bookworm's ansible 7.7.0 ships mellanox.onyx 1.0.0, whose
	// onyx_config action plugin imports ansible.plugins.action.network, gone
	// from ansible-core 2.14 ("No module named 'ansible.plugins.action.network'").
	// Measure with a copy whose one import points at netcommon's.
	coll := filepath.Join(dir, "collections")
	src := "/usr/lib/python3/dist-packages/ansible_collections/mellanox/onyx"
	if err := exec.Command("mkdir", "-p", filepath.Join(coll, "ansible_collections", "mellanox")).Run(); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", src, filepath.Join(coll, "ansible_collections", "mellanox", "onyx")).CombinedOutput(); err != nil {
		t.Skipf("mellanox.onyx not installed: %v %s", err, out)
	}
	action := filepath.Join(coll, "ansible_collections", "mellanox", "onyx", "plugins", "action", "onyx_config.py")
	code, err := os.ReadFile(action)
	if err != nil {
		t.Fatal(err)
	}
	code = []byte(strings.Replace(string(code), "from ansible.plugins.action.network import",
		"from ansible_collections.ansible.netcommon.plugins.action.network import", 1))
	write(action[len(dir)+1:], string(code))
	changed := regexp.MustCompile(`changed=(\d+)`)
	for run := 1; run <= 2; run++ {
		sim.ResetLog()
		start := time.Now()
		cmd := exec.Command(playbook, "-i", hosts, book)
		cmd.Env = append(os.Environ(), "ANSIBLE_HOST_KEY_CHECKING=False", "ANSIBLE_NOCOLOR=1", "ANSIBLE_PERSISTENT_COMMAND_TIMEOUT=30",
			"ANSIBLE_COLLECTIONS_PATH="+coll)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ansible run %d: %v\n%s", run, err, out)
		}
		m := changed.FindSubmatch(out)
		t.Logf("ansible onyx_config run %d (%s): changed=%s, switch received %d config command(s)",
			run, time.Since(start).Round(time.Millisecond), m[1], len(sim.Received()))
		if run == 2 {
			t.Logf("ansible run 2 output:\n%s", out)
		}
	}
}
