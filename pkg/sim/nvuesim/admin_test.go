package nvuesim

import "testing"

// A data plane's view (SetInterfaces) merged over the interfaces keeps the
// administrative state whole: a port the data plane shows administratively
// down (`ip link set down` on the shell) is admin-status and oper-status
// down whatever carrier it reports; a port the configuration shuts stays
// administratively down though the data plane, which need not program
// `link state down`, shows it up; the far end of a port set down shows
// its own admin state up, its link down.
func TestOperationalAdminState(t *testing.T) {
	a := newAPI(t, Options{Ports: 4, Applied: Tree{"interface": Tree{"swp2": Tree{"link": Tree{"state": Tree{"down": Tree{}}}}}}})
	a.s.SetInterfaces(func() map[string]any {
		return map[string]any{
			"swp1": map[string]any{"link": map[string]any{"admin-status": "down", "oper-status": "up", "mtu": int64(9216)}},
			"swp2": map[string]any{"link": map[string]any{"admin-status": "up", "oper-status": "up", "mtu": int64(9216)}},
			"swp3": map[string]any{"link": map[string]any{"admin-status": "up", "oper-status": "down", "mtu": int64(9216)}},
			"swp4": map[string]any{"link": map[string]any{"admin-status": "up", "oper-status": "up", "mtu": int64(9216)}},
		}
	})
	for port, want := range map[string][2]string{"swp1": {"down", "down"}, "swp2": {"down", "down"}, "swp3": {"up", "down"}, "swp4": {"up", "up"}} {
		_, v := a.do("GET", "/nvue_v1/interface/"+port, "")
		link, _ := v["link"].(map[string]any)
		if link["admin-status"] != want[0] || link["oper-status"] != want[1] {
			t.Errorf("%s: admin-status %v, oper-status %v; want %s, %s", port, link["admin-status"], link["oper-status"], want[0], want[1])
		}
	}
	// The collection shows the same.
	_, v := a.do("GET", "/nvue_v1/interface", "")
	if link, _ := at(v, "swp1", "link").(map[string]any); link["oper-status"] != "down" {
		t.Errorf("GET /interface: swp1 %v", link)
	}
}
