package nvuesim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiRoot is where the NVUE API lives.
const apiRoot = "/nvue_v1"

// revision is one NVUE revision: the patches made to it and its state.
type revision struct {
	id      string
	state   string
	patches []patchOp
	issue   map[string]any
	prev    Tree // the applied configuration before this revision (confirm)
	timer   *time.Timer
	save    bool // save when confirmed (auto-save)
}

type patchOp struct {
	path []string
	body any
}

// Revision states (NVUE's revision object; docs/nvue.md has the sources).
const (
	statePending      = "pending"
	stateApply        = "apply"
	stateSave         = "save"
	stateApplied      = "applied"
	stateAppliedSaved = "applied_and_saved"
	stateAYSFail      = "ays_fail"
	stateIgnoreFail   = "ignore_fail"
	stateInvalid      = "invalid"
	stateConfirm      = "confirm"
	stateConfirmFail  = "confirm_fail"
	stateSuperseded   = "superseded" // no longer the applied one (the simulator's word)
)

func unescape(s string) (string, error) { return url.PathUnescape(s) }

// ServeHTTP answers the NVUE API, as a client across the network reaches
// it: the faults between client and switch (Inject, InjectAfter, the
// management path CutOffApply cuts) act on its requests.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, true)
}

// serve answers the NVUE API; across, for a client across the network
// (ServeHTTP), not one on the switch itself (Local).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, across bool) {
	s.mu.Lock()
	deaf := across && time.Now().Before(s.deaf)
	s.mu.Unlock()
	if deaf {
		hangUp(w)
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != s.opt.User || pass != s.opt.Password {
		w.Header().Set("WWW-Authenticate", `Basic realm="nvue"`)
		problem(w, http.StatusUnauthorized, "The server could not verify that you are authorized to access the URL requested.")
		return
	}
	escaped := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(escaped, apiRoot)
	if !ok || rest != "" && rest[0] != '/' {
		problem(w, http.StatusNotFound, "The requested URL was not found on the server.")
		return
	}
	path, ok := splitPath(rest)
	if !ok {
		problem(w, http.StatusNotFound, "The requested URL was not found on the server.")
		return
	}
	rev := r.URL.Query().Get("rev")
	if !across {
		s.serveAPI(w, r, path, rev)
		return
	}
	shown := "/" + strings.Join(path, "/")
	switch s.takeFault(r.Method, shown) {
	case ResetBefore:
		hangUp(w)
		return
	case ProxyError:
		proxyPage(w, http.StatusBadGateway)
		return
	case LoseAnswer:
		s.serveAPI(&discard{header: http.Header{}}, r, path, rev)
		hangUp(w)
		return
	case ProxyTimeout:
		s.serveAPI(&discard{header: http.Header{}}, r, path, rev)
		proxyPage(w, http.StatusGatewayTimeout)
		return
	}
	s.serveAPI(w, r, path, rev)
}

// discard is a ResponseWriter whose answer goes nowhere: the switch acted,
// the client never hears of it.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// proxyPage is the HTML error page of the nginx in front of nvued.
func proxyPage(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
		status, http.StatusText(status), status, http.StatusText(status))
}

// serveAPI answers a request that reached nvued.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, path []string, rev string) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: "/" + strings.Join(path, "/"), Rev: rev})
	s.mu.Unlock()
	var body any
	if r.Method == http.MethodPatch {
		b, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			problem(w, http.StatusBadRequest, "cannot read the request body")
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&body); err != nil || dec.More() {
			problem(w, http.StatusBadRequest, "The browser (or proxy) sent a request that this server could not understand: the body is not one JSON document")
			return
		}
		body = numbers(body)
		if _, isObj := body.(map[string]any); !isObj {
			problem(w, http.StatusBadRequest, fmt.Sprintf("%s is not of type 'object'", compact(body)))
			return
		}
	}
	if len(path) > 0 && path[0] == "revision" {
		s.serveRevision(w, r, path[1:], body)
		return
	}
	switch r.Method {
	case http.MethodGet:
		s.serveGet(w, path, rev)
	case http.MethodPatch:
		s.servePatch(w, path, rev, body)
	default:
		problem(w, http.StatusMethodNotAllowed, "The method is not allowed for the requested URL.")
	}
}

// numbers turns json.Number into int64 (or float64 when fractional).
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// problem writes an error as the API does: a JSON problem document.
func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"detail": detail, "status": status,
		"title": http.StatusText(status), "type": "about:blank"})
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (s *Server) revisionView(r *revision) map[string]any {
	v := map[string]any{"state": r.state, "transition": map[string]any{"issue": r.issue, "progress": ""}}
	if r.issue == nil {
		v["transition"].(map[string]any)["issue"] = map[string]any{}
	}
	return v
}

// serveRevision is /nvue_v1/revision[/<id>].
func (s *Server) serveRevision(w http.ResponseWriter, r *http.Request, rest []string, body any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(rest) == 0 {
		switch r.Method {
		case http.MethodPost:
			id := s.newID()
			rv := &revision{id: id, state: statePending}
			s.revs[id] = rv
			s.order = append(s.order, id)
			reply(w, map[string]any{id: s.revisionView(rv)})
		case http.MethodGet:
			all := map[string]any{}
			for _, id := range s.order {
				all[id] = s.revisionView(s.revs[id])
			}
			reply(w, all)
		default:
			problem(w, http.StatusMethodNotAllowed, "The method is not allowed for the requested URL.")
		}
		return
	}
	if len(rest) != 1 {
		// An id whose "/" was not encoded as %2F arrives as several segments.
		problem(w, http.StatusNotFound, "The requested URL was not found on the server (a revision id's \"/\" must be sent as %2F).")
		return
	}
	rv := s.revs[rest[0]]
	if rest[0] == "applied" {
		rv = s.appliedRevision()
	}
	if rv == nil {
		problem(w, http.StatusNotFound, fmt.Sprintf("revision %q does not exist", rest[0]))
		return
	}
	switch r.Method {
	case http.MethodGet:
		reply(w, s.revisionView(rv))
	case http.MethodDelete:
		if rv.state != statePending && rv.state != stateAYSFail && rv.state != stateIgnoreFail && rv.state != stateInvalid {
			problem(w, http.StatusBadRequest, fmt.Sprintf("revision %s is %s and cannot be deleted", rv.id, rv.state))
			return
		}
		delete(s.revs, rv.id)
		for i, id := range s.order {
			if id == rv.id {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
		reply(w, map[string]any{})
	case http.MethodPatch:
		s.transition(w, rv, body.(map[string]any))
	default:
		problem(w, http.StatusMethodNotAllowed, "The method is not allowed for the requested URL.")
	}
}

// transition is a PATCH of a revision's state (s.mu held):
//
//   - {"state": "apply", "auto-prompt": {"ays": "ays_yes"}} applies a
//     pending revision; with "state-controls": {"confirm": SECONDS} (and
//     "auto-prompt" "confirm": "confirm_yes") it waits in state "confirm"
//     for the same apply body again, and rolls back when the time runs out;
//   - {"state": "save", …} on the applied revision (the id "applied")
//     saves it.
//
// The bodies are those of a public NVUE REST client (docs/nvue.md).
func (s *Server) transition(w http.ResponseWriter, rv *revision, req map[string]any) {
	for k := range req {
		if k != "state" && k != "auto-prompt" && k != "state-controls" {
			problem(w, http.StatusBadRequest, fmt.Sprintf("Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
	}
	state, ok := req["state"].(string)
	if !ok {
		problem(w, http.StatusBadRequest, "'state' is a required property of type 'string'")
		return
	}
	ays := ""
	if ap, present := req["auto-prompt"]; present {
		m, ok := ap.(map[string]any)
		if !ok {
			problem(w, http.StatusBadRequest, "'auto-prompt' is not of type 'object'")
			return
		}
		for k, v := range m {
			sv, _ := v.(string)
			switch {
			case k == "ays" && (sv == "ays_yes" || sv == "ays_no"):
				ays = sv
			case k == "ignore_fail" && (sv == "ignore_fail_yes" || sv == "ignore_fail_no"):
			case k == "confirm" && (sv == "confirm_yes" || sv == "confirm_no"):
			default:
				problem(w, http.StatusBadRequest, fmt.Sprintf("auto-prompt: %q: %s is not valid", k, compact(v)))
				return
			}
		}
	}
	var confirm time.Duration
	if sc, present := req["state-controls"]; present {
		m, ok := sc.(map[string]any)
		if !ok {
			problem(w, http.StatusBadRequest, "'state-controls' is not of type 'object'")
			return
		}
		for k, v := range m {
			n, isInt := v.(int64)
			if k != "confirm" || !isInt || n <= 0 || state != stateApply {
				problem(w, http.StatusBadRequest, fmt.Sprintf("state-controls: %q: %s is not valid (confirm: a number of seconds, with state apply)", k, compact(v)))
				return
			}
			confirm = time.Duration(n) * time.Second
		}
	}
	switch {
	case state == stateApply && rv.state == stateConfirm:
		// The apply body again confirms a revision that waits for it.
		if ays != "ays_yes" {
			problem(w, http.StatusBadRequest, fmt.Sprintf("revision %s waits for its confirmation: apply it again with auto-prompt ays_yes", rv.id))
			return
		}
		rv.timer.Stop()
		s.settle(rv)
		reply(w, s.revisionView(rv))
	case state == stateApply:
		if rv.state != statePending {
			problem(w, http.StatusBadRequest, fmt.Sprintf("revision %s is %s, not pending", rv.id, rv.state))
			return
		}
		for _, other := range s.revs {
			if other.state == stateConfirm {
				problem(w, http.StatusConflict, fmt.Sprintf("revision %s is waiting for its confirmation", other.id))
				return
			}
		}
		s.apply(w, rv, ays, confirm)
	case state == stateSave:
		if rv.state != stateApplied && rv.state != stateAppliedSaved {
			problem(w, http.StatusBadRequest, fmt.Sprintf("revision %s is %s; only the applied revision is saved", rv.id, rv.state))
			return
		}
		s.startup = cloneTree(s.applied)
		rv.state = stateAppliedSaved
		reply(w, s.revisionView(rv))
	default:
		problem(w, http.StatusBadRequest, fmt.Sprintf("state: %q is not one of apply, save", state))
	}
}

// settle makes rv the applied revision, saved when the release saves on
// apply (s.mu held).
func (s *Server) settle(rv *revision) {
	rv.state = stateApplied
	if rv.save {
		s.startup = cloneTree(s.applied)
		rv.state = stateAppliedSaved
	}
	if s.last != nil && s.last != rv && (s.last.state == stateApplied || s.last.state == stateAppliedSaved) {
		s.last.state = stateSuperseded
	}
	s.last = rv
}

// apply applies rv (s.mu held). The answer says "apply"; the outcome is
// read with GET, as on a switch where applying takes a while.
func (s *Server) apply(w http.ResponseWriter, rv *revision, ays string, confirm time.Duration) {
	if ays != "ays_yes" {
		// A REST client cannot answer the "Are you sure?" prompt.
		rv.state = stateAYSFail
		rv.issue = map[string]any{"0": map[string]any{"code": "client_timeout", "message": "Timeout while waiting for client response", "severity": "error"}}
		reply(w, map[string]any{"state": stateApply, "transition": map[string]any{"issue": map[string]any{}, "progress": ""}})
		return
	}
	if msg := s.failNext; msg != "" {
		s.failNext = ""
		rv.state = stateIgnoreFail
		rv.issue = map[string]any{"0": map[string]any{"code": "apply_fail", "message": msg, "severity": "error"}}
		reply(w, map[string]any{"state": stateApply, "transition": map[string]any{"issue": map[string]any{}, "progress": ""}})
		return
	}
	next := s.view(rv)
	if err := validate(next, s.opt); err != nil {
		rv.state = stateInvalid
		rv.issue = map[string]any{"0": map[string]any{"code": "invalid", "message": err.Error(), "severity": "error"}}
		reply(w, map[string]any{"state": stateApply, "transition": map[string]any{"issue": map[string]any{}, "progress": ""}})
		return
	}
	rv.prev = s.applied
	s.applied = next
	s.changed()
	rv.save = s.autoSaves()
	if confirm > 0 {
		rv.state = stateConfirm
		rv.timer = time.AfterFunc(confirm, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if rv.state == stateConfirm && !s.closed {
				s.rollback(rv)
			}
		})
	} else {
		s.settle(rv)
	}
	if s.cutOff > 0 {
		s.deaf = time.Now().Add(s.cutOff)
		s.cutOff = 0
		hangUp(w)
		return
	}
	reply(w, map[string]any{"state": stateApply, "transition": map[string]any{"issue": map[string]any{}, "progress": ""}})
}

// rollback restores the configuration before rv (s.mu held).
func (s *Server) rollback(rv *revision) {
	s.applied = rv.prev
	s.changed()
	rv.state = stateConfirmFail
	rv.issue = map[string]any{"0": map[string]any{"code": "confirm_timeout", "message": "The apply was not confirmed in time; the configuration was rolled back", "severity": "error"}}
}

// appliedRevision is the revision the id "applied" names: the last one
// applied, or one standing for the configuration the switch started with
// (s.mu held).
func (s *Server) appliedRevision() *revision {
	if s.last == nil {
		s.last = &revision{id: "applied", state: stateAppliedSaved}
	}
	return s.last
}

// view is the configuration rv would apply: the applied one with rv's
// patches (s.mu held).
func (s *Server) view(rv *revision) Tree {
	t := cloneTree(s.applied)
	for _, p := range rv.patches {
		mergePatch(t, p.path, p.body)
	}
	return t
}

// servePatch is a targeted (path) or root (no path) PATCH of a revision.
func (s *Server) servePatch(w http.ResponseWriter, path []string, rev string, body any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev == "" {
		problem(w, http.StatusBadRequest, "a PATCH needs ?rev=<revision>: create one with POST /nvue_v1/revision")
		return
	}
	rv := s.revs[rev]
	if rv == nil {
		problem(w, http.StatusNotFound, fmt.Sprintf("revision %q does not exist", rev))
		return
	}
	if rv.state != statePending {
		problem(w, http.StatusBadRequest, fmt.Sprintf("revision %s is %s, not pending", rv.id, rv.state))
		return
	}
	// Check the body where it lands, in the configuration it makes.
	probe := s.view(rv)
	mergePatch(probe, path, body)
	if err := checkPatch(path, body, s.opt); err != nil {
		problem(w, http.StatusBadRequest, err.Error())
		return
	}
	rv.patches = append(rv.patches, patchOp{path: path, body: clone(body)})
	v, _ := subtree(probe, path)
	if v == nil {
		v = map[string]any{}
	}
	reply(w, v)
}

// serveGet reads configuration (rev=applied, startup, a revision id) or,
// without rev (or rev=operational), the operational state.
func (s *Server) serveGet(w http.ResponseWriter, path []string, rev string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t Tree
	switch rev {
	case "applied":
		t = s.applied
	case "startup":
		t = s.startup
	case "", "operational":
		t = s.operational(path)
	default:
		rv := s.revs[rev]
		if rv == nil {
			problem(w, http.StatusNotFound, fmt.Sprintf("revision %q does not exist", rev))
			return
		}
		t = s.view(rv)
	}
	v, ok := subtree(t, path)
	if !ok {
		if rev == "" || rev == "operational" {
			problem(w, http.StatusNotFound, "The requested URL was not found on the server.")
			return
		}
		v = map[string]any{}
	}
	reply(w, v)
}
