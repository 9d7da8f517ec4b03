package lab

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// link-speed stands for a cable or optic that brings the link up slower
// than planned: on the golden fabric's 800G uplink leaf1 swp63 (spine1 swp1
// is 800G too) 1000G is refused, naming the planned speed; on the 400G host
// lane swp1s0 (SN5600 lane, ConnectX-7 400G) 100G is below the plan and 400G
// is the plan; a port the inventory cables to nothing has no plan to judge.
func TestSpeedFault(t *testing.T) {
	inv, err := inventory.LoadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	leaf1 := inv.Switch("leaf1")
	for _, tc := range []struct {
		port      string
		gbps      int
		as, error string
	}{
		{"swp63", 1000, "", "link-speed: leaf1 swp63: 1000G is above the link's planned 800 Gb/s (leaf1 swp63 800 Gb/s, spine1 swp1 800 Gb/s), the most both ends run at: a slower cable or optic is 1-800"},
		{"swp63", 800, "its planned speed (leaf1 swp63 800 Gb/s, spine1 swp1 800 Gb/s)", ""},
		{"swp63", 400, "below its planned 800 Gb/s, as with a slower cable or optic", ""},
		{"swp1s0", 800, "", "link-speed: leaf1 swp1s0: 800G is above the link's planned 400 Gb/s (leaf1 swp1s0 400 Gb/s, h11's NIC 400 Gb/s)"},
		{"swp1s0", 100, "below its planned 400 Gb/s, as with a slower cable or optic", ""},
		{"swp9", 100, "as with another cable or optic (the inventory plans no speed for this port)", ""},
	} {
		as, err := speedFault(inv, leaf1, tc.port, tc.gbps)
		switch {
		case tc.error != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.error)):
			t.Errorf("%s %dG: %q, %v; want the error %q", tc.port, tc.gbps, as, err, tc.error)
		case tc.error == "" && (err != nil || as != tc.as):
			t.Errorf("%s %dG: %q, %v; want %q", tc.port, tc.gbps, as, err, tc.as)
		}
	}
}

// A value that is not one is refused before the lab is asked, as a usage
// error: mtu's N, link-speed's GBPS, a SWITCH:PORT without its colon or a
// side of it (mtu's too: a target with a colon is a SWITCH:PORT).
func TestCheckFaultValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" accepted
	}{
		{[]string{"mtu", "leaf1:swp1", "abc"}, "mtu leaf1:swp1 abc: want HOST or SWITCH:PORT and an MTU of 68-9216 bytes"},
		{[]string{"mtu", "gpu-1", "67"}, "mtu gpu-1 67: want HOST or SWITCH:PORT and an MTU of 68-9216 bytes"},
		{[]string{"mtu", "gpu-1", "1500"}, ""},
		{[]string{"mtu", "leaf1:", "9000"}, `mtu: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", ":swp1", "9000"}, `mtu: ":swp1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", ":", "9000"}, `mtu: ":": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", "leaf1:", "abc"}, `mtu: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", "leaf1:swp1", "9000"}, ""},
		{[]string{"link-speed", "leaf1:swp63", "fast"}, `link-speed: "fast": want a speed of 1-1600 Gb/s (100, 400G)`},
		{[]string{"link-speed", "leaf1:swp63", "0"}, `link-speed: "0": want a speed of 1-1600 Gb/s (100, 400G)`},
		{[]string{"link-speed", "leaf1:swp63", "400G"}, ""},
		{[]string{"link-down", "leaf2"}, `link-down: "leaf2": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-down", "leaf2:"}, `link-down: "leaf2:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-down", ":swp1"}, `link-down: ":swp1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-down", "leaf2:1/31"}, ""},
		{[]string{"link-speed", "leaf1", "100"}, `link-speed: "leaf1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-speed", "leaf1:", "100"}, `link-speed: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-speed", ":swp63", "100"}, `link-speed: ":swp63": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:swp63", "spine1"}, `miswire: "spine1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:", "spine1:swp1"}, `miswire: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:swp63", ":swp1"}, `miswire: ":swp1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:swp63", "spine1:swp1"}, ""},
	} {
		got := ""
		if err := CheckFault(tc.args); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q (\"\": accepted)", tc.args, got, tc.want)
		}
	}
}

// lose-answer waits for rdggen's next apply (docs/lab.md: "applies
// rdggen's next revision"): the mtu fault, a person at the switch, is not
// subject to it, and leaves it pending. Before, the mtu fault's own apply
// took the fault (`Patch "https://127.0.0.1:…": EOF`) and rdggen's next
// apply was answered.
func TestMTULeavesLoseAnswerPending(t *testing.T) {
	inv, err := inventory.LoadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os, ok := switchos.For(inventory.OSCumulus)
	if !ok {
		t.Fatal("no Cumulus switch OS")
	}
	const user, password = "cumulus", "secret"
	ls, err := os.Lab.Start(*inv.Switch("leaf1"), user, password)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	s := &supervisor{inv: inv, switches: map[string]labSwitch{"leaf1": {ls, os}}}
	if msg, err := s.fault([]string{"lose-answer", "leaf1"}); err != nil || msg != "leaf1 will apply the next revision and lose the answer" {
		t.Fatalf("lose-answer: %q, %v", msg, err)
	}
	if msg, err := s.fault([]string{"mtu", "leaf1:swp2", "1500"}); err != nil || msg != "leaf1: interface swp2 link mtu 1500 (applied)" {
		t.Fatalf("mtu with lose-answer pending: %q, %v; want it applied", msg, err)
	}
	srv := ls.Server().(*nvuesim.Server)
	if got := appliedMTU(srv, "swp2"); fmt.Sprint(got) != "1500" {
		t.Errorf("applied interface.swp2.link.mtu %v, want 1500", got)
	}

	// rdggen's next apply, over the API's HTTPS: the switch applies it and
	// the answer is lost.
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	do := func(method, p, body string) (map[string]any, error) {
		req, err := http.NewRequest(method, srv.URL+"/nvue_v1"+p, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.SetBasicAuth(user, password)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s %s: %s, %v", method, p, resp.Status, err)
		}
		return out, nil
	}
	rev, err := do(http.MethodPost, "/revision", "")
	if err != nil || len(rev) != 1 {
		t.Fatalf("POST /revision: %v, %v", rev, err)
	}
	var id string
	for id = range rev {
	}
	if _, err := do(http.MethodPatch, "/interface/swp2/link?rev="+url.QueryEscape(id), `{"mtu": 9216}`); err != nil {
		t.Fatal(err)
	}
	_, err = do(http.MethodPatch, "/revision/"+url.PathEscape(id), `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`)
	if err == nil || !strings.HasSuffix(err.Error(), ": EOF") {
		t.Errorf("rdggen's apply with lose-answer pending: %v, want its answer lost (EOF)", err)
	}
	if got := appliedMTU(srv, "swp2"); fmt.Sprint(got) != "9216" {
		t.Errorf("applied interface.swp2.link.mtu %v after rdggen's apply, want 9216", got)
	}
}

// appliedMTU is the port's link mtu in the switch's applied configuration
// (nil when unset).
func appliedMTU(srv *nvuesim.Server, port string) any {
	var v any = srv.Applied()
	for _, k := range []string{"interface", port, "link", "mtu"} {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}
