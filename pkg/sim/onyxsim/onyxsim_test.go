package onyxsim

import (
	"fmt"
	"strings"
	"testing"
)

// The simulator re-renders what it is sent the way ONYX does: per-port
// input merged into ranges, ranges split where a port differs, `50.00`,
// defaults hidden, secrets as comments.
func TestRenderLikeONYX(t *testing.T) {
	var seed []string
	for p := 1; p <= 32; p++ {
		seed = append(seed, fmt.Sprintf("interface ethernet 1/%d qos trust L3", p))
	}
	seed = append(seed,
		"interface ethernet 1/5 qos trust both",
		"interface ethernet 1/9 qos trust L2", // the default: not shown
		"traffic pool roce type lossless",
		"traffic pool roce memory percent 50",
		"vlan 101-103",
		"vlan 104",
		"username admin password 0 secret",
		"ldap bind-password secret",
	)
	s := Start(t, Options{Seed: seed})
	got := s.RunningConfig()
	for _, want := range []string{
		"   interface ethernet 1/1-1/4 qos trust L3\n   interface ethernet 1/5 qos trust both\n   interface ethernet 1/6-1/8 qos trust L3\n   interface ethernet 1/10-1/32 qos trust L3\n",
		"   traffic pool roce memory percent 50.00\n",
		"   vlan 101-104\n",
		"# ldap bind-password ********\n",
		"##\n## Running-config temporary prefix mode setting\n##\nno cli default prefix-modes enable\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("running-config lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "secret") || strings.Contains(got, "trust L2") {
		t.Errorf("running-config shows a secret or a default:\n%s", got)
	}
}

func TestCommandErrors(t *testing.T) {
	c := newConfig("sw", 32, "3.6.8190")
	for cmd, want := range map[string]string{
		"roce":                                            `Unrecognized command "roce".`,
		"interface ethernet 1/33 qos trust L3":            "Interface ethernet 1/33 does not exist",
		"traffic pool x memory percent 5":                 "Traffic pool x does not exist",
		"interface ethernet 1/1 qos trust L4":             `Unrecognized command "L4".`,
		"interface ethernet 1/1 switchport access vlan 7": "VLAN 7 does not exist",
	} {
		if got := c.configCommand(cmd, false).err; !strings.HasPrefix(got, want) {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
	for _, cmd := range []string{"dcb priority-flow-control enable", "interface ethernet 1/1 mtu 9216", "interface ethernet 1/1-1/2 dcb priority-flow-control mode on"} {
		if c.configCommand(cmd, false).confirm == "" {
			t.Errorf("%q does not ask for confirmation", cmd)
		}
		if c.configCommand(cmd+" force", false).confirm != "" {
			t.Errorf("%q force asks for confirmation", cmd)
		}
	}
	if c := newConfig("sw", 32, "3.8.2008"); c.configCommand("roce", false).err != "" {
		t.Error("3.8.2008 refuses roce")
	}
}
