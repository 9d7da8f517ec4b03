package switchos

// Cumulus Linux: the generator pkg/cumulus, the engine
// internal/engines/nvueapply (the NVUE REST API over HTTPS), the simulator
// pkg/sim/nvuesim.

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rdggen/rdggen/internal/engines/nvueapply"
	"github.com/rdggen/rdggen/internal/flagcheck"
	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// The Cumulus Linux switches' variables (the password never printed): the
// NVUE API login, and the CA file --nvue-ca defaults to (rdggen lab's env
// file sets it).
const (
	envNVUEUser     = "RDGGEN_NVUE_USER"
	envNVUEPassword = "RDGGEN_NVUE_PASSWORD"
	envNVUECA       = "RDGGEN_NVUE_CA"
)

func init() {
	mustRegister(OS{
		OS:    inventory.OSCumulus,
		Files: cumulus.SwitchArtifacts,
		Picture: Picture{
			Gateway: func(*inventory.Inventory, inventory.Switch) string { return cumulus.SVI },
			PortMTU: func(*inventory.Inventory) int { return cumulus.PortMTU },
		},
		Engine: func(s Settings) Engine { return nvueEngine{nvueOptions(s)} },
		Words: Words{What: "Cumulus switch(es)", Reading: "reading the applied configuration of",
			Sent: func(n int, _ bool) string { return fmt.Sprintf("%d NVUE revision(s) applied", n) }},
		Checks: Checks{How: "through the NVUE REST API (GET requests only)", List: []Check{
			{nvueapply.CheckConfig, "the applied configuration against the inventory (apply's plan)"},
			{nvueapply.CheckRoCE, "qos roce operational = applied: mode, PFC priority, ECN, traffic class"},
			{nvueapply.CheckLink, "per data port and fabric uplink: the link up at the speed planned for both ends"},
			{nvueapply.CheckMTU, "per data port and fabric uplink: the operational MTU as apply sets it (9216)"},
			{nvueapply.CheckPauseCounters, "per data port and fabric uplink: PFC pause frames on roce.priority (never fails)"},
			{nvueapply.CheckLLDP, "per fabric uplink: the one LLDP neighbor is the switch and port fabric.links plans"},
			{nvueapply.CheckBGP, "per planned BGP session of a fabric switch: established with the planned peer (its AS, host name)"},
			{nvueapply.CheckBFD, "per planned BGP session of a fabric switch (Cumulus Linux before 5.15): its BFD session up with the planned timers (3 x 300 ms)"},
			{nvueapply.CheckRoutes, "per prefix another fabric switch advertises: installed by BGP, exactly one next hop over each planned uplink (ECMP across the spines)"},
		}},
		BackupExt: nvueapply.BackupExt,
		CLI: CLI{
			Help:       "Cumulus Linux switches through the NVUE REST API (" + envNVUEUser + ", " + envNVUEPassword + ")",
			Flags:      nvueFlags,
			ApplyOnly:  []string{"nvue-confirm-timeout"},
			CheckFlags: nvueCheckFlags,
			Env: func(s *Settings, getenv func(string) string, given func(string) bool) {
				if v := getenv(envNVUEUser); v != "" && !given("nvue-user") {
					s.API.User = v
				}
				if s.API.CAFile == "" && s.API.Fingerprint == "" {
					s.API.CAFile = getenv(envNVUECA)
				}
				s.API.Password, s.API.PasswordVar = getenv(envNVUEPassword), envNVUEPassword
			},
			Credentials: func(s *Settings, sws []inventory.Switch, getenv func(string) string) error {
				var errs []error
				if s.API.Password == "" {
					errs = append(errs, fmt.Errorf("the NVUE API of the Cumulus switches (%s) needs a password: set %s (the user is --nvue-user or %s)",
						names(sws), envNVUEPassword, envNVUEUser))
				}
				// --nvue-ca is checked with the flags; the variable's file
				// here, where a switch would read it.
				if v := getenv(envNVUECA); v != "" && s.API.CAFile == v && s.API.Fingerprint == "" {
					if err := (nvueapply.TLS{CAFile: v}).Check(); err != nil {
						errs = append(errs, fmt.Errorf("$%s: %w", envNVUECA, err))
					}
				}
				return errors.Join(errs...)
			},
			CanLogIn: func(s *Settings, _ func(string) string) bool { return s.API.Password != "" },
			Missing:  "NVUE API password for the Cumulus switches (" + envNVUEPassword + ")",
			Needs:    envNVUEPassword + " for Cumulus",
		},
		Lab: Lab{
			User: "cumulus", UserVar: envNVUEUser, PasswordVar: envNVUEPassword,
			CAFile: "nvue-ca.pem", CAVar: envNVUECA, LosesAnswers: true,
			Start: func(sw inventory.Switch, user, password string) (LabSwitch, error) {
				srv := nvuesim.New(nvuesim.Options{Hostname: sw.Name, Ports: sw.Ports, Model: sw.Model, Version: sw.Cumulus.String(), User: user, Password: password})
				return nvueLab{srv, sw.Name, user, password}, nil
			},
			Serves: func(addr string) string { return "Cumulus NVUE API on https://" + addr },
			Log: func(sw inventory.Switch, addr string) string {
				return fmt.Sprintf("switch %s: NVUE API (Cumulus Linux %s) on https://%s", sw.Name, sw.Cumulus, addr)
			},
		},
	})
}

// nvueFlags are the Cumulus Linux switches' flags.
func nvueFlags(f FlagSet, s *Settings) {
	f.StringVar(&s.API.User, "nvue-user", "cumulus", "NVUE API `USER` on the Cumulus switches (env "+envNVUEUser+"; password from "+envNVUEPassword+")")
	f.IntVar(&s.API.Port, "nvue-port", 8765, "NVUE API HTTPS `PORT` of the Cumulus switches' mgmt addresses")
	f.StringVar(&s.API.CAFile, "nvue-ca", "", "PEM `FILE` of the CA (or self-signed certificate) of the Cumulus switches' NVUE API (default $"+envNVUECA+", else the system's roots)")
	f.StringVar(&s.API.Fingerprint, "nvue-fingerprint", "", "pin the Cumulus switches' NVUE API certificate instead: its `SHA256` in hex (openssl x509 -noout -fingerprint -sha256)")
	f.DurationVar(&s.API.RequestTimeout, "nvue-timeout", 30*time.Second, "timeout per NVUE API request (> 0)")
	f.DurationVar(&s.API.ConfirmTimeout, "nvue-confirm-timeout", 300*time.Second, "a Cumulus switch rolls an apply back by itself unless rdggen confirms it within this time (>= 1s)")
}

// nvueCheckFlags refuses the NVUE flags' values that make no sense.
func nvueCheckFlags(s *Settings) error {
	n := s.API
	errs := []error{flagcheck.Positive("--nvue-timeout", n.RequestTimeout), flagcheck.Port("--nvue-port", n.Port)}
	if n.ConfirmTimeout < time.Second {
		errs = append(errs, errors.New("--nvue-confirm-timeout must be at least 1s"))
	}
	if n.CAFile != "" && n.Fingerprint != "" {
		errs = append(errs, errors.New("--nvue-ca and --nvue-fingerprint exclude each other: verify the switches' certificate one way"))
	} else if err := (nvueapply.TLS{CAFile: n.CAFile, Fingerprint: n.Fingerprint}).Check(); err != nil {
		flag := "--nvue-ca"
		if n.Fingerprint != "" {
			flag = "--nvue-fingerprint"
		}
		errs = append(errs, fmt.Errorf("%s: %w", flag, err))
	}
	return errors.Join(errs...)
}

// nvueOptions are nvueapply's options for a run with settings s.
func nvueOptions(s Settings) nvueapply.Options {
	return nvueapply.Options{
		User: s.API.User, Password: s.API.Password, PasswordVar: s.API.PasswordVar, Port: s.API.Port,
		TLS:       nvueapply.TLS{CAFile: s.API.CAFile, Fingerprint: s.API.Fingerprint},
		BackupDir: s.BackupDir, DryRun: s.DryRun, Parallel: s.Parallel,
		RequestTimeout: s.API.RequestTimeout, ConfirmTimeout: s.API.ConfirmTimeout, ApplyTimeout: s.API.ApplyTimeout,
		Out: s.Out, Track: s.Track, Gate: s.Gate,
	}
}

// nvueEngine is Cumulus Linux's engine: the NVUE REST API over HTTPS
// (internal/engines/nvueapply).
type nvueEngine struct{ o nvueapply.Options }

func (e nvueEngine) Plan(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch) Unit {
	return nvueUnit{nvueapply.Prepare(ctx, inv, sw, e.o)}
}

func (e nvueEngine) Check(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]readiness.Result, error) {
	return nvueapply.Check(ctx, inv, sws, e.o)
}

// Counters reads the pause frames only: no NVUE view of a port's ECN
// marks is documented (nvueapply.Counters), so ECN is -1, not read.
func (e nvueEngine) Counters(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]PortCount, error) {
	cs, err := nvueapply.Counters(ctx, inv, sws, e.o)
	out := make([]PortCount, len(cs))
	for i, c := range cs {
		out[i] = PortCount{Port: c.Port, Pause: c.Pause, ECN: -1}
	}
	return out, err
}

type nvueUnit struct{ *nvueapply.Prepared }

func (u nvueUnit) Finish() Outcome {
	r := u.Prepared.Finish()
	o := Outcome{Err: r.Err, Empty: r.Plan.Empty(), Pushed: r.Pushed}
	if r.Applied {
		o.Sent = 1
	}
	return o
}

// nvueLab is a simulated Cumulus switch of the lab, with its login.
type nvueLab struct {
	srv                  *nvuesim.Server
	name, user, password string
}

func (l nvueLab) Addr() string       { return l.srv.Addr }
func (l nvueLab) KnownHosts() string { return "" }
func (l nvueLab) Close()             { l.srv.Close() }
func (l nvueLab) Server() any        { return l.srv }

func (l nvueLab) CA() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.srv.Certificate().Raw})
}

func (l nvueLab) LoseAnswer() string {
	l.srv.Inject(http.MethodPatch, "/revision", nvuesim.LoseAnswer)
	return l.name + " will apply the next revision and lose the answer"
}

// SetMTU applies the port's MTU as `nv set interface swpN link mtu M; nv
// config apply -y` would.
func (l nvueLab) SetMTU(port string, n int) (string, error) {
	if !strings.HasPrefix(port, "swp") {
		return "", fmt.Errorf("mtu: %s is a Cumulus switch: name the port swpN", l.name)
	}
	if err := l.set("/interface/"+url.PathEscape(port)+"/link", map[string]any{"mtu": n}); err != nil {
		return "", fmt.Errorf("mtu: %s: %w", l.name, err)
	}
	return fmt.Sprintf("%s: interface %s link mtu %d (applied)", l.name, port, n), nil
}

// set applies one change to the simulator through its NVUE REST API, as
// `nv set …; nv config apply -y` does: a new revision, a PATCH into it,
// and its state set to apply. It reaches the API from the switch itself
// (nvuesim.Server.Local), as the person at the switch would: the faults
// between rdggen and the switch (lose-answer's) are not its, they stay
// pending for rdggen's next apply.
func (l nvueLab) set(path string, body any) error {
	c := &http.Client{Timeout: 10 * time.Second, Transport: l.srv.Local()}
	do := func(method, p string, body any) (map[string]any, error) {
		var r *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			r = bytes.NewReader(b)
		} else {
			r = bytes.NewReader(nil)
		}
		req, err := http.NewRequest(method, l.srv.URL+"/nvue_v1"+p, r)
		if err != nil {
			return nil, err
		}
		req.SetBasicAuth(l.user, l.password)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("%s %s: %s %v", method, p, resp.Status, out)
		}
		return out, nil
	}
	rev, err := do(http.MethodPost, "/revision", nil)
	if err != nil {
		return err
	}
	var id string
	for k := range rev {
		id = k
	}
	if _, err := do(http.MethodPatch, path+"?rev="+url.QueryEscape(id), body); err != nil {
		return err
	}
	_, err = do(http.MethodPatch, "/revision/"+url.PathEscape(id),
		map[string]any{"state": "apply", "auto-prompt": map[string]any{"ays": "ays_yes"}})
	return err
}
