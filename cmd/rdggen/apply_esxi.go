package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/vmware/govmomi/vim25"

	"github.com/rdggen/rdggen/internal/flagcheck"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// esxiModules is the nmlx5_core parameter store; nil means the host's
// kernel module system over the vSphere API. Tests set it.
var esxiModules apply.ModuleParams

// timeoutHint adds to an error that is a timeout how long the bound was and
// the flag that sets it; other errors, and one it already added to, are
// returned as they are.
func timeoutHint(err error, flag string, d time.Duration) error {
	var ne net.Error
	var b *boundError
	if err == nil || errors.As(err, &b) || !(errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		strings.Contains(err.Error(), "Client.Timeout exceeded")) {
		return err
	}
	return &boundError{fmt.Errorf("%w: no answer within %s; %s sets that bound", err, d, flag)}
}

// boundError is an error timeoutHint added its bound to.
type boundError struct{ error }

func (e *boundError) Unwrap() error { return e.error }

// vcenterCredentials refuses, before connecting, a vCenter login without a
// user name or a password: vCenter's SSO has no account without either,
// and the login would fail only after the connection.
func vcenterCredentials(cfg apply.VCenter) error {
	var missing, vars []string
	if cfg.Username == "" {
		missing, vars = append(missing, "user name"), append(vars, "$"+apply.EnvVCenterUsername)
	}
	if cfg.Password == "" {
		missing, vars = append(missing, "password"), append(vars, "$"+apply.EnvVCenterPassword)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("vCenter %s (from %s): no %s to log in with: set %s", cfg.Host(), cfg.Source,
		strings.Join(missing, " and no "), strings.Join(vars, " and "))
}

// unreachableHint adds, to an error of reaching vCenter at all (no route,
// refused, unknown name), where its address came from, so that a wrong
// GOVC_URL or inventory vcenter is found where it is set.
func unreachableHint(err error, cfg apply.VCenter) error {
	var op *net.OpError
	var dns *net.DNSError
	if !errors.As(err, &op) && !errors.As(err, &dns) {
		return err
	}
	if op != nil && op.Op != "dial" {
		return err
	}
	var where string
	switch cfg.Source {
	case apply.EnvVCenterURL:
		where = "the address is $" + apply.EnvVCenterURL + "'s (it overrides the inventory's vcenter): check it, or unset it to use the inventory's"
	case "--vcenter":
		where = "the address is --vcenter's: check it"
	default:
		where = "the address is the inventory's vcenter: check it, or set $" + apply.EnvVCenterURL + " (or --vcenter) to reach vCenter elsewhere"
	}
	return fmt.Errorf("%w; %s", err, where)
}

// esxiTarget is `rdggen apply --target esxi`: missing VMs cloned from their
// template and booted with their cloud-init identity, VM settings (EFI, 64-bit MMIO,
// memory reservation, GPU passthrough, SR-IOV adapter) and ESXi host settings
// (GPU passthrough, SR-IOV, nmlx5_core RoCE parameters) through the vSphere API.
func esxiTarget() *applyTarget {
	var vcenterURL string
	var insecure, allowHTTP, full bool
	var timeout, toolsTimeout time.Duration
	config := func(env *applyEnv) (apply.VCenter, error) {
		v, err := apply.VCenterFromEnv(env.Inv, env.Getenv, vcenterURL, insecure)
		v.AllowHTTP = allowHTTP
		return v, err
	}
	// connect logs in to vCenter as the target starts, saying where and
	// waiting visibly (apply.ESXiOptions.Connect).
	connect := func(env *applyEnv, tr *targetRun) func(ctx context.Context) (*vim25.Client, func(), error) {
		return func(ctx context.Context) (*vim25.Client, func(), error) {
			cfg, err := config(env)
			if err != nil {
				return nil, nil, err
			}
			if err := cfg.CheckTLS(); err != nil {
				return nil, nil, err
			}
			cfg.Timeout, cfg.Conns = timeout, env.Parallel+2
			fmt.Fprintf(tr.Out, "vCenter %s (from %s)\n", cfg, cfg.Source)
			tr.Track.Phase("connecting to vCenter", 0)
			waited := tr.Track.Wait(fmt.Sprintf("vCenter %s to answer the login (bound: --vcenter-timeout %s)", cfg.Host(), timeout))
			c, logout, err := apply.ConnectVCenter(ctx, cfg)
			waited()
			if err != nil {
				return nil, nil, timeoutHint(unreachableHint(err, cfg), "--vcenter-timeout", timeout)
			}
			return c, logout, nil
		}
	}
	return &applyTarget{
		name: "esxi",
		help: "VMs and ESXi hosts through vCenter (GOVC_URL, GOVC_USERNAME, GOVC_PASSWORD, GOVC_TLS_CA_CERTS, GOVC_INSECURE)",
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&vcenterURL, "vcenter", "", "vCenter `URL` for --target esxi (default $GOVC_URL, else the inventory's vcenter); credentials from $GOVC_USERNAME/$GOVC_PASSWORD")
			fs.BoolVar(&insecure, "vcenter-insecure", false, "do not verify vCenter's TLS certificate (also $GOVC_INSECURE=1); prefer $GOVC_TLS_CA_CERTS")
			fs.BoolVar(&allowHTTP, "vcenter-allow-http", false, "allow an http:// vCenter URL, the inventory's vcenter included (the password then crosses the network unencrypted)")
			fs.DurationVar(&timeout, "vcenter-timeout", 2*time.Minute, "bound on each vSphere API request (> 0)")
			fs.DurationVar(&toolsTimeout, "vm-tools-timeout", apply.DefaultToolsTimeout, "bound on the wait for VMware Tools after a cloned VM's first power-on (> 0)")
			fs.BoolVar(&full, "full", false, "esxi: read every VM whole, not only those whose change version differs from the record of the last apply\n"+
				"(kept in $XDG_CACHE_HOME/rdggen, default ~/.cache/rdggen)")
		},
		// check creates no VM (nothing to wait for) and always reads
		// every VM whole (the record is apply's).
		applyOnly: []string{"vm-tools-timeout", "full"},
		check: func() error {
			// The flag's URL is refused before anything is loaded or
			// contacted (ConfigFromEnv reads it by the same grammar).
			var urlErr error
			if vcenterURL != "" {
				if _, err := inventory.ParseVCenterURL(vcenterURL, false); err != nil {
					if errors.Is(err, inventory.ErrVCenterCredentials) {
						err = fmt.Errorf("%w (a command line shows in the process list and the shell's history)", err)
					}
					urlErr = fmt.Errorf("--vcenter: %w", err)
				}
			}
			return errors.Join(urlErr, flagcheck.Positive("--vcenter-timeout", timeout), flagcheck.Positive("--vm-tools-timeout", toolsTimeout))
		},
		prepare: func(env *applyEnv) error {
			cfg, err := config(env)
			if errors.Is(err, apply.ErrNoVCenter) {
				return err // known before anything is contacted
			}
			if err != nil || cfg.CheckTLS() != nil {
				return nil // the URL's problems are connect's to report, as they always were
			}
			var caErr error
			if err := cfg.CheckCACerts(); err != nil { // read as connect reads it: a named pipe refused, not waited on
				caErr = fmt.Errorf("$%s: %w", apply.EnvVCenterCACerts, err)
			}
			return errors.Join(vcenterCredentials(cfg), caErr)
		},
		target: func(env *applyEnv, tr *targetRun) (apply.Target, error) {
			o := apply.ESXiOptions{Common: tr.common(env), Connect: connect(env, tr), ToolsTimeout: toolsTimeout, Full: full, Modules: esxiModules}
			if !env.Checking {
				o.RecordDir = esxiRecordDir(env.Getenv)
			}
			return o, nil
		},
		hint: func(err error) error { return timeoutHint(err, "--vcenter-timeout", timeout) },
	}
}

// esxiRecordDir is where apply keeps the record of the VMs of each vCenter
// it read whole and found matching (apply.ESXiOptions.RecordDir: a file
// per vCenter instance UUID): $XDG_CACHE_HOME/rdggen, else
// ~/.cache/rdggen; "" (no record) when neither variable is set. Losing the
// file costs one apply that reads every VM whole.
func esxiRecordDir(getenv func(string) string) string {
	dir := getenv("XDG_CACHE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "rdggen")
}
