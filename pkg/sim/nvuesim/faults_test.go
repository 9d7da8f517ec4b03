package nvuesim

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// raw sends a request and returns the status and body, or the transport
// error.
func (a *api) raw(method, rawPath, body string) (int, string, error) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.s.URL+rawPath, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.SetBasicAuth("cumulus", a.pwd)
	resp, err := a.c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// TestInjectedFaults: each fault between client and switch does what it
// says on the switch's side: LoseAnswer and ProxyTimeout act, ProxyError
// and ResetBefore do not; InjectAfter skips requests; a fault is used once.
func TestInjectedFaults(t *testing.T) {
	a := newAPI(t, Options{})
	for _, c := range []struct {
		fault  Fault
		acts   bool
		status int // 0: no answer
	}{
		{LoseAnswer, true, 0},
		{ProxyTimeout, true, 504},
		{ProxyError, false, 502},
		{ResetBefore, false, 0},
	} {
		before := len(a.s.Revisions())
		a.s.Inject("POST", "/revision", c.fault)
		code, body, err := a.raw("POST", "/nvue_v1/revision", "")
		if c.status == 0 && err == nil || c.status != 0 && (err != nil || code != c.status || !strings.Contains(body, "nginx")) {
			t.Errorf("fault %d: status %d, err %v, body %q", c.fault, code, err, body)
		}
		if made := len(a.s.Revisions()) - before; made != map[bool]int{true: 1, false: 0}[c.acts] {
			t.Errorf("fault %d: %d revision(s) made", c.fault, made)
		}
	}
	// Used once: the next request is answered.
	if code, _, err := a.raw("POST", "/nvue_v1/revision", ""); err != nil || code != 200 {
		t.Errorf("after the faults: %d %v", code, err)
	}
	a.s.InjectAfter("GET", "/system", 1, ProxyError)
	if code, _, _ := a.raw("GET", "/nvue_v1/system", ""); code != 200 {
		t.Errorf("first GET (skipped): %d", code)
	}
	if code, _, _ := a.raw("GET", "/nvue_v1/system", ""); code != 502 {
		t.Errorf("second GET: %d, want the injected 502", code)
	}
}

// TestLocalNotFaulted: a request from the switch itself (Local) is not
// subject to the faults between client and switch; each stays pending for
// the next client across the network. CutOffApply's apply, the switch's
// own, cuts a local apply off too: an error, the change applied.
func TestLocalNotFaulted(t *testing.T) {
	a := newAPI(t, Options{})
	local := &http.Client{Timeout: 5 * time.Second, Transport: a.s.Local()}
	send := func(c *http.Client, method, path, body string) (int, error) {
		req, err := http.NewRequest(method, a.s.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("cumulus", a.pwd)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for _, f := range []Fault{LoseAnswer, ProxyTimeout, ProxyError, ResetBefore} {
		a.s.Inject("POST", "/revision", f)
		if code, err := send(local, "POST", "/nvue_v1/revision", ""); code != 200 || err != nil {
			t.Errorf("fault %d pending: local POST /revision: %d, %v; want 200", f, code, err)
		}
		if code, err := send(a.c, "POST", "/nvue_v1/revision", ""); code == 200 {
			t.Errorf("fault %d: the network client's POST /revision answered 200 (%v): the fault did not stay pending", f, err)
		}
	}
	if code, err := send(a.c, "POST", "/nvue_v1/revision", ""); code != 200 || err != nil {
		t.Errorf("after the faults: %d, %v", code, err)
	}

	a.s.CutOffApply(time.Minute)
	_, rev := a.do("POST", "/nvue_v1/revision", "")
	var id string
	for id = range rev {
	}
	if code, err := send(local, "PATCH", "/nvue_v1/system?rev="+url.QueryEscape(id), `{"hostname": "sw9"}`); code != 200 || err != nil {
		t.Fatalf("local PATCH: %d, %v", code, err)
	}
	_, err := send(local, "PATCH", "/nvue_v1/revision/"+url.PathEscape(id), `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`)
	if err == nil || !strings.Contains(err.Error(), "the switch closed the connection without an answer") {
		t.Errorf("local apply cut off: %v", err)
	}
	if h := a.s.Applied()["system"].(map[string]any)["hostname"]; h != "sw9" {
		t.Errorf("hostname %v after the cut-off apply, want sw9", h)
	}
}
