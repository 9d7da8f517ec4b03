package nvuesim

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// api is a raw HTTP client of the simulator: the protocol as curl speaks it.
type api struct {
	t   *testing.T
	s   *Server
	c   *http.Client
	pwd string
}

func newAPI(t *testing.T, o Options) *api {
	s := Start(t, o)
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return &api{t: t, s: s, pwd: "cumulus", c: &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
}

// do sends method to rawPath (already escaped) with body and returns the
// status and the decoded answer.
func (a *api) do(method, rawPath, body string) (int, map[string]any) {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.s.URL+rawPath, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.SetBasicAuth("cumulus", a.pwd)
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, rawPath, err)
	}
	defer resp.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&v); err != nil {
		a.t.Fatalf("%s %s: %d, not a JSON object: %q", method, rawPath, resp.StatusCode, b)
	}
	return resp.StatusCode, v
}

// revision creates one and returns its id and its escaped form.
func (a *api) revision() (string, string) {
	a.t.Helper()
	code, v := a.do("POST", "/nvue_v1/revision", "")
	if code != 200 || len(v) != 1 {
		a.t.Fatalf("POST revision: %d %v", code, v)
	}
	for id := range v {
		return id, url.PathEscape(id)
	}
	return "", ""
}

func (a *api) state(esc string) string {
	a.t.Helper()
	_, v := a.do("GET", "/nvue_v1/revision/"+esc, "")
	s, _ := v["state"].(string)
	return s
}

func TestRevisionIDEncoding(t *testing.T) {
	a := newAPI(t, Options{})
	id, esc := a.revision()
	if !strings.HasPrefix(id, "changeset/cumulus/") || !strings.Contains(esc, "%2F") {
		t.Fatalf("id %q, escaped %q", id, esc)
	}
	if st := a.state(esc); st != "pending" {
		t.Errorf("new revision: %q", st)
	}
	if code, v := a.do("GET", "/nvue_v1/revision/"+id, ""); code != 404 || !strings.Contains(v["detail"].(string), "%2F") {
		t.Errorf("an unencoded id: %d %v", code, v)
	}
	if code, _ := a.do("PATCH", "/nvue_v1/interface/swp1/link?rev="+url.QueryEscape(id), `{"mtu": 9000}`); code != 200 {
		t.Errorf("targeted PATCH: %d", code)
	}
	_, v := a.do("GET", "/nvue_v1/interface/swp1/link?rev="+url.QueryEscape(id), "")
	if v["mtu"] != float64(9000) {
		t.Errorf("GET of the revision: %v", v)
	}
	if _, v := a.do("GET", "/nvue_v1/interface/swp1/link?rev=applied", ""); v["mtu"] != nil {
		t.Errorf("applied before the apply: %v", v)
	}
}

func TestMalformedBodies(t *testing.T) {
	a := newAPI(t, Options{})
	id, esc := a.revision()
	rev := "?rev=" + url.QueryEscape(id)
	for _, c := range []struct{ path, body, detail string }{
		{"/nvue_v1/" + rev, `{"qos": `, "not one JSON document"},
		{"/nvue_v1/" + rev, `{"a": 1} {"b": 2}`, "not one JSON document"},
		{"/nvue_v1/" + rev, `[1, 2]`, "is not of type 'object'"},
		{"/nvue_v1/" + rev, `{"qoss": {}}`, "Additional properties are not allowed ('qoss' was unexpected)"},
		{"/nvue_v1/qos/roce" + rev, `{"mode": "lossles"}`, "qos.roce.mode"},
		{"/nvue_v1/interface/swp1/link" + rev, `{"mtu": "9216"}`, "552-9216"},
		{"/nvue_v1/interface/swp1/link" + rev, `{"mtu": 9217}`, "552-9216"},
		{"/nvue_v1/interface/swp1/link" + rev, `{"mtu": 9216.5}`, "552-9216"},
		{"/nvue_v1/interface/swp%201" + rev, `{}`, "not a valid interface name"},
		{"/nvue_v1/vrf/default/router/static/172.16.1.0" + rev, `{}`, "not a prefix"},
		{"/nvue_v1/system" + rev, `{"hostname": "a b"}`, "not a host name"},
		{"/nvue_v1/qos/roce", `{"mode": "lossless"}`, "needs ?rev="},
		{"/nvue_v1/revision/" + esc, `{"state": "apply", "auto-prompt": {"ays": "yes"}}`, "auto-prompt"},
		{"/nvue_v1/revision/" + esc, `{"state": "aply"}`, "not one of"},
		{"/nvue_v1/revision/" + esc, `{"state": "apply", "state-controls": {"confirm": "ten"}}`, "state-controls"},
		{"/nvue_v1/revision/" + esc, `{"state": "apply", "state-controls": {"confirm": 0}}`, "state-controls"},
		{"/nvue_v1/revision/" + esc, `{"state": "apply", "auto-prompt": {"confirm": "yes"}}`, "auto-prompt"},
		{"/nvue_v1/revision/" + esc, `{"state": "apply", "force": true}`, "'force' was unexpected"},
	} {
		code, v := a.do("PATCH", c.path, c.body)
		detail, _ := v["detail"].(string)
		if code != 400 || !strings.Contains(detail, c.detail) {
			t.Errorf("PATCH %s %s: %d %q, want 400 with %q", c.path, c.body, code, detail, c.detail)
		}
	}
	if st := a.state(esc); st != "pending" {
		t.Errorf("a refused body changed the revision: %s", st)
	}
	a.pwd = "wrong"
	if code, _ := a.do("GET", "/nvue_v1/system", ""); code != 401 {
		t.Errorf("wrong password: %d", code)
	}
}

func TestApplyPrompts(t *testing.T) {
	a := newAPI(t, Options{Version: "5.8.0"})
	id, esc := a.revision()
	a.do("PATCH", "/nvue_v1/?rev="+url.QueryEscape(id), `{"qos": {"roce": {"enable": "on", "mode": "lossless"}}}`)
	// Without the auto-prompt the REST client cannot answer "Are you sure?".
	if code, v := a.do("PATCH", "/nvue_v1/revision/"+esc, `{"state": "apply"}`); code != 200 || v["state"] != "apply" {
		t.Fatalf("apply: %d %v", code, v)
	}
	_, v := a.do("GET", "/nvue_v1/revision/"+esc, "")
	issue := v["transition"].(map[string]any)["issue"].(map[string]any)["0"].(map[string]any)
	if v["state"] != "ays_fail" || issue["code"] != "client_timeout" || issue["message"] != "Timeout while waiting for client response" {
		t.Errorf("without ays: %v", v)
	}
	if len(a.s.Applied()) != 0 {
		t.Errorf("ays_fail applied: %v", a.s.Applied())
	}

	id, esc = a.revision()
	a.do("PATCH", "/nvue_v1/?rev="+url.QueryEscape(id), `{"qos": {"roce": {"enable": "on", "mode": "lossless"}}}`)
	a.do("PATCH", "/nvue_v1/revision/"+esc, `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`)
	if st := a.state(esc); st != "applied" {
		t.Fatalf("with ays_yes: %s", st)
	}
	_, op := a.do("GET", "/nvue_v1/qos/roce", "")
	if op["mode"] != "lossless" || op["pfc"].(map[string]any)["pfc-priority"] != "3" {
		t.Errorf("operational qos roce: %v", op)
	}
	// 5.8 does not save on apply.
	if len(a.s.Startup()) != 0 {
		t.Errorf("5.8 saved on apply: %v", a.s.Startup())
	}
	if st := a.state("applied"); st != "applied" {
		t.Errorf("the applied revision before save: %s", st)
	}
	a.do("PATCH", "/nvue_v1/revision/applied", `{"state": "save", "auto-prompt": {"ays": "ays_yes"}}`)
	if st := a.state(esc); st != "applied_and_saved" || len(a.s.Startup()) == 0 {
		t.Errorf("save: %s %v", st, a.s.Startup())
	}
}

func TestConfirmAndRollback(t *testing.T) {
	a := newAPI(t, Options{Applied: Tree{"system": Tree{"hostname": "before"}}})
	const confirmed = `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`
	hostname := func() any { return a.s.Applied()["system"].(map[string]any)["hostname"] }
	apply := func(name string, seconds int) string {
		id, esc := a.revision()
		a.do("PATCH", "/nvue_v1/system?rev="+url.QueryEscape(id), `{"hostname": "`+name+`"}`)
		body := fmt.Sprintf(`{"state": "apply", "auto-prompt": {"ays": "ays_yes", "confirm": "confirm_yes"}, "state-controls": {"confirm": %d}}`, seconds)
		if code, v := a.do("PATCH", "/nvue_v1/revision/"+esc, body); code != 200 {
			t.Fatalf("apply: %d %v", code, v)
		}
		return esc
	}
	if st := a.state("applied"); st != "applied_and_saved" {
		t.Errorf("the configuration the switch starts with: %s", st)
	}
	esc := apply("confirmed", 60)
	if st := a.state(esc); st != "confirm" || hostname() != "confirmed" {
		t.Fatalf("waiting for confirm: %s %v", st, hostname())
	}
	if a.s.Startup()["system"].(map[string]any)["hostname"] != "before" {
		t.Error("saved before the confirmation")
	}
	// A second apply waits for the first confirmation.
	id2, esc2 := a.revision()
	a.do("PATCH", "/nvue_v1/system?rev="+url.QueryEscape(id2), `{"hostname": "x"}`)
	if code, _ := a.do("PATCH", "/nvue_v1/revision/"+esc2, confirmed); code != 409 {
		t.Errorf("apply during a confirm window: %d", code)
	}
	// The apply body again confirms it; 5.9 saves then.
	a.do("PATCH", "/nvue_v1/revision/"+esc, confirmed)
	if st := a.state(esc); st != "applied_and_saved" || a.s.Startup()["system"].(map[string]any)["hostname"] != "confirmed" {
		t.Errorf("after the confirmation: %s, startup %v", st, a.s.Startup())
	}
	a.do("DELETE", "/nvue_v1/revision/"+esc2, "")

	esc = apply("rolled-back", 1)
	time.Sleep(1500 * time.Millisecond)
	if st := a.state(esc); st != "confirm_fail" || hostname() != "confirmed" {
		t.Errorf("after the confirm timeout: %s %v", st, hostname())
	}
	if code, _ := a.do("PATCH", "/nvue_v1/revision/"+esc, confirmed); code != 400 {
		t.Errorf("confirming a rolled-back revision: %d", code)
	}
}

func TestOperationalViews(t *testing.T) {
	a := newAPI(t, Options{Ports: 4, Applied: Tree{"interface": Tree{"swp2": Tree{"link": Tree{"mtu": int64(1500), "state": Tree{"down": Tree{}}}}}}})
	a.s.SetLink("swp3", false)
	a.s.SetPauseCounters("swp1", 3, 12, 34)
	for port, want := range map[string][3]any{"swp1": {"up", "up", float64(9216)}, "swp2": {"down", "down", float64(1500)}, "swp3": {"up", "down", float64(9216)}} {
		_, v := a.do("GET", "/nvue_v1/interface/"+port, "")
		link := v["link"].(map[string]any)
		if link["admin-status"] != want[0] || link["oper-status"] != want[1] || link["mtu"] != want[2] {
			t.Errorf("%s: %v", port, link)
		}
	}
	_, v := a.do("GET", "/nvue_v1/interface/swp1/counters/qos/pfc-stats", "")
	p3 := v["switch-priority"].(map[string]any)["3"].(map[string]any)
	if p3["rx-pause-frames"] != float64(12) || p3["tx-pause-frames"] != float64(34) {
		t.Errorf("pfc-stats: %v", p3)
	}
	if code, _ := a.do("GET", "/nvue_v1/interface/swp5", ""); code != 404 {
		t.Errorf("a port the switch lacks: %d", code)
	}
	if _, v := a.do("GET", "/nvue_v1/qos/roce", ""); v["mode"] != "disabled" {
		t.Errorf("qos roce without configuration: %v", v)
	}
	if _, v := a.do("GET", "/nvue_v1/system", ""); v["build"] != "Cumulus Linux 5.9.1" {
		t.Errorf("system: %v", v)
	}
	// A port beyond the switch's is refused at apply, and nothing changes.
	id, esc := a.revision()
	a.do("PATCH", "/nvue_v1/interface/swp9?rev="+url.QueryEscape(id), `{"type": "swp"}`)
	a.do("PATCH", "/nvue_v1/revision/"+esc, `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`)
	if st := a.state(esc); st != "invalid" {
		t.Errorf("swp9 on a 4-port switch: %s", st)
	}
}
