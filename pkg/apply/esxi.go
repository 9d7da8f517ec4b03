package apply

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/vcenter"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// ModuleParams reads and sets an ESXi host's kernel module parameter string
// (what `esxcli system module parameters list/set -m MODULE` show and
// set). nil in ESXiOptions means esxcli over the vSphere API; a test gives
// an in-memory store, since govmomi's simulator has no esxcli.
type ModuleParams = esxiapply.ModuleParams

// ESXiHost names an ESXi host for ModuleParams: its name and managed object.
type ESXiHost = esxiapply.Host

// ESXiOptions say which vCenter session to use and what to do.
type ESXiOptions struct {
	Common
	// Client is a logged-in vSphere API client (ConnectVCenter, or your own
	// govmomi session).
	Client *vim25.Client
	// Modules reads and sets the nmlx5_core parameters; nil means esxcli
	// over the vSphere API.
	Modules ModuleParams
	// ToolsTimeout bounds the wait for VMware Tools after the first
	// power-on of a VM cloned from its template (0: 10 minutes).
	ToolsTimeout time.Duration
	// Record is the file where ESXi keeps, between applies, the change
	// version of every VM it read whole and found matching; a VM whose
	// change version and wanted state are as recorded is not read again
	// (its settings and device list), which makes a no-op read a small
	// part of what it would. "" keeps no record: every VM is read whole.
	// A missing, damaged or foreign file only means a whole read. A dry
	// run reads the file and does not write it. CheckESXi ignores it.
	Record string
	// Full reads every VM whole whatever Record holds (Record is then
	// written anew).
	Full bool
}

func (o ESXiOptions) engine(r *run) esxiapply.Options {
	return esxiapply.Options{DryRun: o.DryRun, Parallel: o.parallel(), Out: r.track.Writer(), Modules: o.Modules, Track: r.track, Gate: o.Confirm,
		ToolsTimeout: o.ToolsTimeout, Full: o.Full}
}

// ESXi brings the VMs (EFI firmware, 64-bit MMIO, full memory reservation,
// GPU passthrough devices, the SR-IOV adapter; a VM vCenter lacks is cloned
// from the host's inventory.Template first and booted with its cloud-init
// identity) and their ESXi hosts (GPU
// passthrough, SR-IOV VF count, nmlx5_core lossless-RoCE parameters, the
// vSwitch MTU) to what the inventory asks, through vCenter: one read of
// every object, then only the changes. Settings that take effect at boot are
// reported as "reboot needed"; devices that wait for that boot are attached
// by the first run after it. With o.Record set, a VM whose change version
// and wanted state are those the last apply recorded is not read again
// (docs/architecture.md, "The ESXi record"). The error wraps ErrMachines
// when hosts or VMs failed.
func ESXi(ctx context.Context, inv *inventory.Inventory, o ESXiOptions) (*Result, error) {
	r := o.begin(applyplan.TargetESXi)
	opts := o.engine(r)
	if o.Record != "" {
		rec, err := esxiapply.LoadRecord(o.Record)
		if err != nil && !o.Full {
			fmt.Fprintf(r.track.Writer(), "esxi: note: the record of the last apply cannot be used (%v): every VM is read whole\n", err)
		}
		opts.Record = rec
	}
	res, err := esxiapply.Apply(ctx, o.Client, inv, opts)
	out := &Result{Target: applyplan.TargetESXi}
	if res != nil && res.Record != nil && o.Record != "" && !o.DryRun {
		if err := res.Record.Save(o.Record); err != nil {
			fmt.Fprintf(r.track.Writer(), "esxi: note: the record of this apply was not saved (%v): the next apply reads every VM whole\n", err)
		}
	}
	if res != nil {
		out.Machines = res.Machines
		out.Summary = res.Summary()
		fmt.Fprintln(r.track.Writer(), out.Summary)
	}
	out.Seconds = r.end()
	switch {
	case err != nil:
		return out, err
	case res != nil && len(res.Failed) > 0:
		var names []string
		for _, m := range out.Machines {
			if m.Status == applyplan.Failed || m.Status == applyplan.Interrupted {
				names = append(names, m.Name)
			}
		}
		return out, machinesErr(applyplan.TargetESXi, out.Machines, fmt.Sprintf("%d failed: %s", len(res.Failed), strings.Join(names, ", ")))
	}
	return out, nil
}

// CheckESXi checks every ESXi host (passthrough enabled and active, SR-IOV
// VFs requested and present, nmlx5_core parameters, a pending reboot, the
// NIC, the vSwitch MTU) and VM (placement, the settings ESXi manages, power,
// devices attached and connected), changing nothing: only reads go to
// vCenter.
func CheckESXi(ctx context.Context, inv *inventory.Inventory, o ESXiOptions) ([]readiness.Result, error) {
	r := o.begin(applyplan.TargetESXi)
	defer r.end()
	return esxiapply.Check(ctx, o.Client, inv, o.engine(r))
}

// VCenter says where and how to log in to vCenter.
type VCenter struct {
	// URL is the SDK endpoint, e.g. https://vcenter.example/sdk, read by
	// inventory.ParseVCenterURL (without credentials). An http:// URL is
	// refused unless AllowHTTP is set (the password would cross the network
	// unencrypted).
	URL       string
	AllowHTTP bool
	// Username and Password log in; the password is never printed.
	Username, Password string
	// CACerts are PEM files trusted for vCenter's certificate; Insecure
	// skips verification (an explicit opt-out).
	CACerts  string
	Insecure bool
	// Timeout bounds every API request (0: none).
	Timeout time.Duration
	// Conns is how many connections to keep open for parallel calls
	// (default 2).
	Conns int
}

// ConnectVCenter logs in and returns the client and a logout function.
func ConnectVCenter(ctx context.Context, v VCenter) (*vim25.Client, func(), error) {
	u, err := inventory.ParseVCenterURL(v.URL, false) // the CLI's grammar; credentials go in Username and Password
	if err != nil {
		return nil, nil, fmt.Errorf("VCenter.URL: %w", err)
	}
	cfg := vcenter.Config{URL: u, Username: v.Username, Password: v.Password, CACerts: v.CACerts, Insecure: v.Insecure,
		Timeout: v.Timeout, Source: "VCenter.URL"}
	if err := cfg.RequireTLS(v.AllowHTTP); err != nil {
		return nil, nil, err
	}
	s, err := vcenter.Connect(ctx, cfg, v.Conns, nil)
	if err != nil {
		return nil, nil, err
	}
	return s.Client, func() { s.Logout(ctx) }, nil
}
