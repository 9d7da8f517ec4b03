package inventory

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// testOS is a switch OS registered by these tests (RegisterSwitchOS): its
// ports are "p1" … "pN" (lanes "p1.2"), it takes swpN spellings no more
// than ONYX does, and it refuses versions below 2.
const testOS SwitchOS = "testos"

var registerTestOS = sync.OnceValue(func() error {
	return RegisterSwitchOS(testOS, SwitchOSTraits{
		Name: "Test OS", Short: "TestOS", PortExample: "p1",
		PortName: func(p Port) string {
			if p.Lane > 0 {
				return fmt.Sprintf("p%d.%d", p.Number, p.Lane)
			}
			return fmt.Sprintf("p%d", p.Number)
		},
		PortRange: func(n int) string { return fmt.Sprintf("p1-p%d (1/1-1/%d)", n, n) },
		CheckVersion: func(v Version) error {
			if !v.AtLeast(2) {
				return fmt.Errorf("too old (from 2)")
			}
			return nil
		},
	})
})

// withTestOS registers testOS once for the test binary.
func withTestOS(t testing.TB) {
	t.Helper()
	if err := registerTestOS(); err != nil {
		t.Fatal(err)
	}
}

// TestRegisterSwitchOS: a registered OS is a key of a switch's mapping,
// validated by its traits, and the rest of the model asks it for its
// names; what cannot be an OS's key is refused at registration.
func TestRegisterSwitchOS(t *testing.T) {
	withTestOS(t)
	src := strings.Replace(baseYAML, "onyx: 3.6.8190", "testos: 2.1", 1)
	inv, err := Load("mini.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sw := inv.Switches[0]
	if sw.OS() != testOS || sw.Release() != "Test OS 2.1" || sw.Version().String() != "2.1" || !sw.ONYX.IsZero() || !sw.Cumulus.IsZero() {
		t.Errorf("switch: OS %q, release %q, ONYX %v, Cumulus %v", sw.OS(), sw.Release(), sw.ONYX, sw.Cumulus)
	}
	if got := sw.PortName(inv.Hosts[1].Data.Port); got != "p2" {
		t.Errorf("host b's port is %q, want p2", got)
	}
	if got := inv.SwitchesOf(testOS); len(got) != 1 || got[0].Name != "sw1" {
		t.Errorf("SwitchesOf(testos) = %v", got)
	}

	for _, tc := range []struct{ old, new, want string }{
		{"testos: 2.1", "testos: 1.9", "mini.yaml:3:40: switches[0].testos: Test OS 1.9: too old (from 2)"},
		{"testos: 2.1", "testos: 2.1, cumulus: 5.9.1", "mini.yaml:3:40: switches[0].testos: a switch runs one OS: give one of cumulus (5.9.1), testos (2.1), not 2"},
		{"testos: 2.1", "testos: 2.1, sonic: 1", `mini.yaml:3:45: switches[0].sonic: unknown key "sonic" (known keys here: asn, breakout, cumulus,`},
		{"testos: 2.1", "testos: ~", "mini.yaml:3:5: switches[0]: names no OS"},
		{"port: 1/2}", "port: swp2}", `mini.yaml:18:40: hosts[1].data.port: "swp2" is Cumulus Linux's spelling, but sw1 runs Test OS, which calls front-panel port 2 p2`},
		{"port: 1/2}", "port: 1/17}", "mini.yaml:18:40: hosts[1].data.port: 1/17 is outside SN2100 ports p1-p16 (1/1-1/16)"},
	} {
		src := strings.Replace(strings.Replace(baseYAML, "onyx: 3.6.8190", "testos: 2.1", 1), tc.old, tc.new, 1)
		_, err := Load("mini.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.new, err, tc.want)
		}
	}

	for _, tc := range []struct {
		os   SwitchOS
		want string
	}{
		{"onyx", "already known"},
		{testOS, "already known"},
		{"Sonic", "not a key"},
		{"name", "already has that key"},
		{"role", "already has that key"},
		{"", "not a key"},
	} {
		err := RegisterSwitchOS(tc.os, SwitchOSTraits{Name: "X", Short: "X", PortExample: "1", PortName: Port.String, PortRange: func(int) string { return "" }})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RegisterSwitchOS(%q): %v, want %q", tc.os, err, tc.want)
		}
	}
	if err := RegisterSwitchOS("nameless", SwitchOSTraits{}); err == nil || !strings.Contains(err.Error(), "need Name") {
		t.Errorf("RegisterSwitchOS without traits: %v", err)
	}
}
