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

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/vcenter"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// esxiModules gives the nmlx5_core parameter store of a session; nil means
// the host's kernel module system over the vSphere API
// (esxiapply.KernelModuleParams). Tests may set it.
var esxiModules func(c *vim25.Client) esxiapply.ModuleParams

// timeoutHint adds to an error that is a timeout how long the bound was and
// the flag that sets it; other errors are returned as they are.
func timeoutHint(err error, flag string, d time.Duration) error {
	var ne net.Error
	if err == nil || !(errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		strings.Contains(err.Error(), "Client.Timeout exceeded")) {
		return err
	}
	return fmt.Errorf("%w: no answer within %s; %s sets that bound", err, d, flag)
}

// vcenterCredentials refuses, before connecting, a vCenter login without a
// user name or a password: vCenter's SSO has no account without either,
// and the login would fail only after the connection.
func vcenterCredentials(cfg vcenter.Config) error {
	var missing, vars []string
	if cfg.Username == "" {
		missing, vars = append(missing, "user name"), append(vars, "$"+vcenter.EnvUsername)
	}
	if cfg.Password == "" {
		missing, vars = append(missing, "password"), append(vars, "$"+vcenter.EnvPassword)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("vCenter %s (from %s): no %s to log in with: set %s", cfg.URL.Host, cfg.Source,
		strings.Join(missing, " and no "), strings.Join(vars, " and "))
}

// unreachableHint adds, to an error of reaching vCenter at all (no route,
// refused, unknown name), where its address came from, so that a wrong
// GOVC_URL or inventory vcenter is found where it is set.
func unreachableHint(err error, cfg vcenter.Config) error {
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
	case vcenter.EnvURL:
		where = "the address is $" + vcenter.EnvURL + "'s (it overrides the inventory's vcenter): check it, or unset it to use the inventory's"
	case "--vcenter":
		where = "the address is --vcenter's: check it"
	default:
		where = "the address is the inventory's vcenter: check it, or set $" + vcenter.EnvURL + " (or --vcenter) to reach vCenter elsewhere"
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
	config := func(env *applyEnv) (vcenter.Config, error) {
		return vcenter.ConfigFromEnv(env.Inv, env.Getenv, vcenterURL, insecure)
	}
	// connect logs in to vCenter, saying where and waiting visibly.
	connect := func(ctx context.Context, env *applyEnv, tr *targetRun) (*vcenter.Session, error) {
		cfg, err := config(env)
		if err != nil {
			return nil, err
		}
		if err := cfg.RequireTLS(allowHTTP); err != nil {
			return nil, err
		}
		cfg.Timeout = timeout
		fmt.Fprintf(tr.Out, "vCenter %s (from %s)\n", cfg, cfg.Source)
		tr.Track.Phase("connecting to vCenter", 0)
		waited := tr.Track.Wait(fmt.Sprintf("vCenter %s to answer the login (bound: --vcenter-timeout %s)", cfg.URL.Host, timeout))
		sess, err := vcenter.Connect(ctx, cfg, env.Parallel+2, nil)
		waited()
		if err != nil {
			return nil, timeoutHint(unreachableHint(err, cfg), "--vcenter-timeout", timeout)
		}
		return sess, nil
	}
	// options are the esxi target's settings for apply and check.
	options := func(env *applyEnv, tr *targetRun, sess *vcenter.Session) apply.ESXiOptions {
		opts := apply.ESXiOptions{Common: tr.common(env), Client: sess.Client, ToolsTimeout: toolsTimeout, Full: full}
		if !env.Checking {
			opts.Record = esxiRecordFile(env.Getenv, sess.Client)
		}
		if esxiModules != nil {
			opts.Modules = esxiModules(sess.Client)
		}
		return opts
	}
	return &applyTarget{
		name: "esxi",
		help: "VMs and ESXi hosts through vCenter (GOVC_URL, GOVC_USERNAME, GOVC_PASSWORD, GOVC_TLS_CA_CERTS, GOVC_INSECURE)",
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&vcenterURL, "vcenter", "", "vCenter `URL` for --target esxi (default $GOVC_URL, else the inventory's vcenter); credentials from $GOVC_USERNAME/$GOVC_PASSWORD")
			fs.BoolVar(&insecure, "vcenter-insecure", false, "do not verify vCenter's TLS certificate (also $GOVC_INSECURE=1); prefer $GOVC_TLS_CA_CERTS")
			fs.BoolVar(&allowHTTP, "vcenter-allow-http", false, "allow an http:// vCenter URL, the inventory's vcenter included (the password then crosses the network unencrypted)")
			fs.DurationVar(&timeout, "vcenter-timeout", 2*time.Minute, "bound on each vSphere API request (> 0)")
			fs.DurationVar(&toolsTimeout, "vm-tools-timeout", esxiapply.DefaultToolsTimeout, "bound on the wait for VMware Tools after a cloned VM's first power-on (> 0)")
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
			return errors.Join(urlErr, positive("--vcenter-timeout", timeout), positive("--vm-tools-timeout", toolsTimeout))
		},
		prepare: func(env *applyEnv) error {
			cfg, err := config(env)
			if errors.Is(err, vcenter.ErrNoURL) {
				return err // known before anything is contacted
			}
			if err != nil || cfg.RequireTLS(allowHTTP) != nil {
				return nil // the URL's problems are connect's to report, as they always were
			}
			return vcenterCredentials(cfg)
		},
		run: func(ctx context.Context, env *applyEnv, tr *targetRun) error {
			sess, err := connect(ctx, env, tr)
			if err != nil {
				return err
			}
			defer sess.Logout(ctx)
			res, err := apply.ESXi(ctx, env.Inv, options(env, tr, sess))
			return tr.result(res, timeoutHint(err, "--vcenter-timeout", timeout))
		},
		inspect: func(ctx context.Context, env *applyEnv, tr *targetRun) ([]readiness.Result, error) {
			sess, err := connect(ctx, env, tr)
			if err != nil {
				return nil, err
			}
			defer sess.Logout(ctx)
			rs, err := apply.CheckESXi(ctx, env.Inv, options(env, tr, sess))
			return rs, timeoutHint(err, "--vcenter-timeout", timeout)
		},
	}
}

// esxiRecordFile is where apply keeps the record of the VMs of one vCenter
// it read whole and found matching (esxiapply.Record):
// $XDG_CACHE_HOME/rdggen/esxi-UUID.json, else ~/.cache/rdggen/…, UUID being
// the vCenter's InstanceUuid (a record is only ever of one vCenter); "" (no
// record) when neither variable is set or vCenter names no instance. Losing
// the file costs one apply that reads every VM whole.
func esxiRecordFile(getenv func(string) string, c *vim25.Client) string {
	dir := getenv("XDG_CACHE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	id := c.ServiceContent.About.InstanceUuid
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return ""
	}
	return filepath.Join(dir, "rdggen", "esxi-"+id+".json")
}
