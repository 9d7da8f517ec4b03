package nvuesim

import (
	"net/url"
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
