package switchos

// ONYX: the generator pkg/onyx, the engine internal/engines/onyxapply (the
// CLI over SSH), the simulator pkg/sim/onyxsim.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rdggen/rdggen/internal/engines/onyxapply"
	"github.com/rdggen/rdggen/internal/flagcheck"
	"github.com/rdggen/rdggen/internal/transport/sshconn"
	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// The ONYX switches' variables (never printed): the SSH login.
const (
	envSwitchUser     = "RDGGEN_SWITCH_USER"
	envSwitchPassword = "RDGGEN_SWITCH_PASSWORD"
)

func init() {
	mustRegister(OS{
		OS: inventory.OSONYX,
		Files: func(inv *inventory.Inventory, sw inventory.Switch) []artifact.File {
			return []artifact.File{onyx.SwitchArtifact(inv, sw)}
		},
		Picture: Picture{
			Gateway:  func(*inventory.Inventory, inventory.Switch) string { return fmt.Sprintf("vlan %d", onyx.DataVLAN) },
			PortMTU:  onyx.PortMTU,
			PortName: func(sw inventory.Switch, p inventory.Port) string { return "ethernet " + sw.PortName(p) },
		},
		Engine: func(s Settings) Engine { return onyxEngine{onyxOptions(s)} },
		Words: Words{What: "switch(es)", Reading: "reading the running-config of", Nothing: "0 commands sent",
			Sent: func(n int, alone bool) string {
				if alone {
					return fmt.Sprintf("%d command(s) sent", n)
				}
				return fmt.Sprintf("%d ONYX command(s) sent", n)
			}},
		Checks: Checks{How: "over SSH (show commands only)", List: []Check{
			{onyxapply.CheckConfig, "the running-config against the inventory (apply's plan)"},
			{onyxapply.CheckLink, "per data port and fabric uplink: the link up at the speed planned for both ends"},
			{onyxapply.CheckMTU, "per data port and fabric uplink: MTU ≥ 9216 (jumbo data network, fabric) or 1500"},
			{onyxapply.CheckPFC, "per data port and fabric uplink: PFC on, on roce.priority, oper Enabled"},
			{onyxapply.CheckPauseCounters, "per data port and fabric uplink: pause frames on roce.priority (never fails)"},
			{onyxapply.CheckECN, "per data port and fabric uplink: ECN on the RoCE class at roce.ecn_min/max_kb"},
			{onyxapply.CheckLLDP, "per fabric uplink: the one LLDP neighbor is the switch and port fabric.links plans"},
			{onyxapply.CheckBGP, "per planned BGP session of a fabric switch: ESTABLISHED with the planned ASes, carrying the planned prefixes (show ip bgp summary)"},
			{onyxapply.CheckBFD, "per planned BGP session of a fabric switch: its BFD session UP, with the planned timers (3 x 300 ms) where shown (show ip bfd neighbors; its form is inferred)"},
		}},
		BackupExt: onyxapply.BackupExt,
		CLI: CLI{
			Help:  "ONYX switches over SSH (" + envSwitchUser + ", " + envSwitchPassword + ")",
			Flags: onyxFlags,
			CheckFlags: func(s *Settings) error {
				errs := []error{flagcheck.Positive("--switch-timeout", s.SSH.CommandTimeout), flagcheck.Port("--switch-ssh-port", s.SSH.Port)}
				if s.SSH.Batch < 1 {
					errs = append(errs, fmt.Errorf("--switch-batch %d: must be at least 1", s.SSH.Batch))
				}
				return errors.Join(errs...)
			},
			ApplyOnly: []string{"switch-batch"},
			Env: func(s *Settings, getenv func(string) string, given func(string) bool) {
				if v := getenv(envSwitchUser); v != "" && !given("switch-user") {
					s.SSH.User = v
				}
				s.SSH.Password, s.SSH.PasswordVar = getenv(envSwitchPassword), envSwitchPassword
				s.SSH.CommandTimeoutFlag = fmt.Sprintf("--switch-timeout %s", s.SSH.CommandTimeout)
			},
			Credentials: func(s *Settings, sws []inventory.Switch, _ func(string) string) error {
				err := sshconn.CheckCredentials(sshconn.Config{Agent: true, Identities: s.SSH.Identities, Password: s.SSH.Password, PasswordVar: s.SSH.PasswordVar})
				if err != nil {
					return fmt.Errorf("SSH to the switches (%s): %w", names(sws), err)
				}
				return nil
			},
			CanLogIn: func(s *Settings, getenv func(string) string) bool {
				return s.SSH.Password != "" || getenv("SSH_AUTH_SOCK") != "" || len(s.SSH.Identities) > 0
			},
			Missing: "SSH credentials for the switches (" + envSwitchPassword + ", ssh-agent or --identity)",
			Needs:   envSwitchPassword + ", ssh-agent or --identity for ONYX",
		},
		Lab: Lab{
			User: "admin", UserVar: envSwitchUser, PasswordVar: envSwitchPassword,
			Start: func(sw inventory.Switch, user, password string) (LabSwitch, error) {
				srv, err := onyxsim.New(onyxsim.Options{Hostname: sw.Name, Ports: sw.Ports, Version: sw.ONYX.String(), User: user, Password: password})
				if err != nil {
					return nil, err
				}
				return onyxLab{srv, sw.Name}, nil
			},
			Serves: func(addr string) string { return "ONYX CLI over SSH on " + addr },
			Log: func(sw inventory.Switch, addr string) string {
				return fmt.Sprintf("switch %s: ONYX %s CLI over SSH on %s", sw.Name, sw.ONYX, addr)
			},
		},
	})
}

// onyxFlags are the ONYX switches' flags.
func onyxFlags(f FlagSet, s *Settings) {
	f.StringVar(&s.SSH.User, "switch-user", "admin", "SSH `USER` on the switches (env "+envSwitchUser+")")
	f.IntVar(&s.SSH.Port, "switch-ssh-port", 22, "SSH `PORT` of the switches' mgmt addresses")
	f.DurationVar(&s.SSH.CommandTimeout, "switch-timeout", 60*time.Second, "timeout per switch CLI command (> 0)")
	f.IntVar(&s.SSH.Batch, "switch-batch", 256, "most independent entries (static routes, port addresses, BGP neighbors) pasted in one write (`N` ≥ 1; 1: every command on its own)")
}

// onyxOptions are onyxapply's options for a run with settings s.
func onyxOptions(s Settings) onyxapply.Options {
	user := s.SSH.User
	if user == "" {
		user = "admin"
	}
	return onyxapply.Options{
		User: user, Password: s.SSH.Password, Agent: s.SSH.Agent, Identities: s.SSH.Identities, Port: s.SSH.Port,
		KnownHosts: s.SSH.KnownHosts, BackupDir: s.BackupDir, DryRun: s.DryRun, Parallel: s.Parallel,
		CommandTimeout: s.SSH.CommandTimeout, DialTimeout: s.SSH.Timeout, DialTimeoutFlag: s.SSH.TimeoutFlag,
		CommandTimeoutFlag: s.SSH.CommandTimeoutFlag, PasswordVar: s.SSH.PasswordVar, Batch: s.SSH.Batch,
		Out: s.Out, Track: s.Track, Gate: s.Gate,
	}
}

// onyxEngine is ONYX's engine: the CLI over SSH (internal/engines/onyxapply).
type onyxEngine struct{ o onyxapply.Options }

func (e onyxEngine) Plan(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch) Unit {
	return onyxUnit{onyxapply.Prepare(ctx, inv, sw, e.o)}
}

func (e onyxEngine) Check(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]readiness.Result, error) {
	return onyxapply.Check(ctx, inv, e.only(sws))
}

func (e onyxEngine) Counters(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]PortCount, error) {
	cs, _, err := onyxapply.Counters(ctx, inv, e.only(sws))
	out := make([]PortCount, len(cs))
	for i, c := range cs {
		out[i] = PortCount{Port: c.Port, Pause: c.Pause, ECN: c.ECN}
	}
	return out, err
}

// only are the engine's options for the switches sws alone.
func (e onyxEngine) only(sws []inventory.Switch) onyxapply.Options {
	o := e.o
	o.Select = func(sw inventory.Switch) bool {
		return slices.ContainsFunc(sws, func(s inventory.Switch) bool { return s.Name == sw.Name })
	}
	return o
}

type onyxUnit struct{ *onyxapply.Prepared }

func (u onyxUnit) Finish() Outcome {
	r := u.Prepared.Finish()
	return Outcome{Err: r.Err, Empty: r.Plan.Empty(), Pushed: r.Pushed, Sent: r.Sent}
}

// onyxLab is a simulated ONYX switch of the lab.
type onyxLab struct {
	srv  *onyxsim.Server
	name string
}

func (l onyxLab) Addr() string       { return l.srv.Addr }
func (l onyxLab) KnownHosts() string { return l.srv.KnownHostsLine() }
func (l onyxLab) CA() []byte         { return nil }
func (l onyxLab) LoseAnswer() string { return "" }
func (l onyxLab) Close()             { l.srv.Close() }
func (l onyxLab) Server() any        { return l.srv }

// SetMTU configures the port's MTU as a person at the switch would:
// `interface ethernet P mtu N force` (P as 1/N, "ethernet 1/N" taken too).
func (l onyxLab) SetMTU(port string, n int) (string, error) {
	p := strings.TrimPrefix(port, "ethernet ")
	if err := l.srv.Configure(fmt.Sprintf("interface ethernet %s mtu %d force", p, n)); err != nil {
		return "", fmt.Errorf("mtu: %w", err)
	}
	return fmt.Sprintf("%s: interface ethernet %s mtu %d", l.name, p, n), nil
}
