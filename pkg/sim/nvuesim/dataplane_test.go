package nvuesim

import (
	"net/url"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// OnApply runs after an apply (not after a refused one); SetBGPNeighbors'
// entries show over the configured neighbors in the operational view only.
func TestOnApplyAndBGPNeighbors(t *testing.T) {
	a := newAPI(t, Options{Applied: Tree{"vrf": map[string]any{"default": map[string]any{"router": map[string]any{"bgp": map[string]any{
		"neighbor": map[string]any{"swp31": map[string]any{"remote-as": "external", "type": "unnumbered"}},
	}}}}}})
	var n atomic.Int32
	a.s.OnApply(func() { n.Add(1) })
	a.s.SetBGPNeighbors(func() map[string]any {
		return map[string]any{"swp31": map[string]any{"state": "established", "remote-as": int64(65199)}}
	})
	id, esc := a.revision()
	a.do("PATCH", "/nvue_v1/interface/swp31/link?rev="+url.QueryEscape(id), `{"mtu": 9000}`)
	a.do("PATCH", "/nvue_v1/revision/"+esc, `{"state": "apply"}`) // no ays: refused
	id, esc = a.revision()
	a.do("PATCH", "/nvue_v1/interface/swp31/link?rev="+url.QueryEscape(id), `{"mtu": 9000}`)
	a.do("PATCH", "/nvue_v1/revision/"+esc, `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`)
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n.Load() != 1 {
		t.Errorf("OnApply ran %d times, want 1", n.Load())
	}
	_, op := a.do("GET", "/nvue_v1/vrf/default/router/bgp/neighbor", "")
	sw, _ := op["swp31"].(map[string]any)
	if sw["state"] != "established" || sw["remote-as"] != float64(65199) || sw["type"] != "unnumbered" {
		t.Errorf("operational neighbors: %v", op)
	}
	_, cfg := a.do("GET", "/nvue_v1/vrf/default/router/bgp/neighbor?rev=applied", "")
	if sw, _ := cfg["swp31"].(map[string]any); sw["state"] != nil || sw["remote-as"] != "external" {
		t.Errorf("applied neighbors carry the live state: %v", cfg)
	}
}

// Without SetRIB the route table is empty; with it, the table is f's
// routes, each readable alone at its prefix (the "/" as %2F), in the
// operational view only.
func TestRIB(t *testing.T) {
	a := newAPI(t, Options{})
	if code, v := a.do("GET", "/nvue_v1/vrf/default/router/rib/ipv4/route", ""); code != 200 || len(v) != 0 {
		t.Errorf("no data plane: %d %v, want an empty table", code, v)
	}
	route := map[string]any{"protocol": map[string]any{"bgp": map[string]any{"entry-index": map[string]any{"1": map[string]any{
		"flags": map[string]any{"installed": map[string]any{}},
		"via":   map[string]any{"fe80::1": map[string]any{"interface": "swp63"}, "fe80::2": map[string]any{"interface": "swp64"}},
	}}}}}
	a.s.SetRIB(func() map[string]any { return map[string]any{"10.1.2.0/24": route} })
	code, v := a.do("GET", "/nvue_v1/vrf/default/router/rib/ipv4/route/10.1.2.0%2F24", "")
	vias, _ := dig(v, "protocol", "bgp", "entry-index", "1", "via").(map[string]any)
	if code != 200 || len(vias) != 2 {
		t.Errorf("GET route/10.1.2.0%%2F24: %d %v", code, v)
	}
	if code, _ := a.do("GET", "/nvue_v1/vrf/default/router/rib/ipv4/route/10.1.3.0%2F24", ""); code != 404 {
		t.Errorf("a prefix not in the table: %d, want 404", code)
	}
	if _, v := a.do("GET", "/nvue_v1/vrf/default/router/rib?rev=applied", ""); len(v) != 0 {
		t.Errorf("the applied configuration holds the RIB: %v", v)
	}
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// A data plane's hooks run for the reads that reach their views only: a
// GET of one view (or below it) runs its hook and no other, a GET of a node
// that holds several runs each of theirs, one of a view no hook backs runs
// none; and what each hook gives is in the answer wherever its view is read.
func TestHooksRunForTheirViews(t *testing.T) {
	a := newAPI(t, Options{Ports: 2})
	var calls struct{ bgp, rib, bfd, ifs atomic.Int32 }
	a.s.SetBGPNeighbors(func() map[string]any {
		calls.bgp.Add(1)
		return map[string]any{"swp1": map[string]any{"state": "established"}}
	})
	a.s.SetRIB(func() map[string]any {
		calls.rib.Add(1)
		return map[string]any{"10.1.2.0/24": map[string]any{"protocol": map[string]any{"bgp": map[string]any{}}}}
	})
	a.s.SetBFDPeers(func() map[string]any {
		calls.bfd.Add(1)
		return map[string]any{"1": map[string]any{"interface": "swp1", "state": "up"}}
	})
	a.s.SetInterfaces(func() map[string]any {
		calls.ifs.Add(1)
		return map[string]any{"swp1": map[string]any{"link": map[string]any{"oper-status": "down"}}}
	})
	for _, c := range []struct {
		path string
		// want is the hooks that run, in the order bgp, rib, bfd, interfaces.
		want [4]int32
		// key, under the answer, holds what a hook gave ("" for none).
		key []string
		val any
	}{
		{"/nvue_v1/system", [4]int32{}, nil, nil},
		{"/nvue_v1/qos/roce", [4]int32{}, nil, nil},
		{"/nvue_v1/vrf/default/router/bgp/neighbor", [4]int32{1, 0, 0, 0}, []string{"swp1", "state"}, "established"},
		{"/nvue_v1/vrf/default/router/rib/ipv4/route", [4]int32{0, 1, 0, 0}, []string{"10.1.2.0/24", "protocol"}, map[string]any{"bgp": map[string]any{}}},
		{"/nvue_v1/vrf/default/router/rib/ipv4/route/10.1.2.0%2F24", [4]int32{0, 1, 0, 0}, []string{"protocol"}, map[string]any{"bgp": map[string]any{}}},
		{"/nvue_v1/vrf/default/router/bfd/peers", [4]int32{0, 0, 1, 0}, []string{"1", "state"}, "up"},
		{"/nvue_v1/interface", [4]int32{0, 0, 0, 1}, []string{"swp1", "link", "oper-status"}, "down"},
		{"/nvue_v1/interface/swp1/link", [4]int32{0, 0, 0, 1}, []string{"oper-status"}, "down"},
		{"/nvue_v1/vrf/default/router", [4]int32{1, 1, 1, 0}, []string{"bgp", "neighbor", "swp1", "state"}, "established"},
		{"/nvue_v1/", [4]int32{1, 1, 1, 1}, []string{"interface", "swp1", "link", "oper-status"}, "down"},
		{"/nvue_v1/vrf/default/router?rev=applied", [4]int32{}, nil, nil},
	} {
		before := [4]int32{calls.bgp.Load(), calls.rib.Load(), calls.bfd.Load(), calls.ifs.Load()}
		code, v := a.do("GET", c.path, "")
		ran := [4]int32{calls.bgp.Load() - before[0], calls.rib.Load() - before[1], calls.bfd.Load() - before[2], calls.ifs.Load() - before[3]}
		if code != 200 || ran != c.want {
			t.Errorf("GET %s: %d, hooks ran (bgp, rib, bfd, interfaces) %v, want %v", c.path, code, ran, c.want)
		}
		if c.key != nil && !reflect.DeepEqual(dig(v, c.key...), c.val) {
			t.Errorf("GET %s: %v at %v, want %v", c.path, dig(v, c.key...), c.key, c.val)
		}
	}
}
