package apply

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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

// DefaultToolsTimeout is ESXiOptions.ToolsTimeout's default: how long a
// VM cloned from its template may take from its first power-on until
// VMware Tools reports running.
const DefaultToolsTimeout = esxiapply.DefaultToolsTimeout

// ESXiOptions say which vCenter session to use and what to do.
type ESXiOptions struct {
	Common
	// Client is a logged-in vSphere API client (ConnectVCenter, or your own
	// govmomi session).
	Client *vim25.Client
	// Connect, when Client is nil, logs in as the target starts and
	// returns the client and the logout that ESXi and CheckESXi call as
	// they end: within ApplyAll the login then runs beside the other
	// targets, and a vCenter slow to answer holds none of them up.
	// VCenter.Connector is one. One of Client and Connect is needed.
	Connect func(ctx context.Context) (client *vim25.Client, logout func(), err error)
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
	// A missing or damaged file (not JSON, another schema) only means a
	// whole read, and so does a refused one (internal/ownfs's rule: a
	// record another user could have written is not believed): a file in
	// a directory that is a symbolic link, another user's, or writable by
	// its group or others; a file that is a symbolic link, not a regular
	// file (a named pipe, refused at once, never waited on; a device, a
	// directory), another user's, or writable by its group or others.
	// Such a directory is not written into either. A dry run reads the
	// file and does not write it. CheckESXi ignores it.
	Record string
	// RecordDir, when Record is "", keeps the record in this directory as
	// esxi-<vCenter's instance UUID>.json: one record per vCenter, whatever
	// URL reached it; none when vCenter names no instance.
	RecordDir string
	// Full reads every VM whole whatever Record holds (Record is then
	// written anew).
	Full bool
}

// problem is an ESXiOptions that cannot run: no way to vCenter.
func (o ESXiOptions) problem() error {
	if o.Client == nil && o.Connect == nil {
		return errors.New("ESXiOptions has no Client and no Connect: give a logged-in client (ConnectVCenter) or a way to log in (VCenter.Connector)")
	}
	return nil
}

// session is the client, logged in by Connect when there is no Client,
// and what to call when done.
func (o ESXiOptions) session(ctx context.Context) (*vim25.Client, func(), error) {
	if err := o.problem(); err != nil {
		return nil, nil, err
	}
	if o.Client != nil {
		return o.Client, func() {}, nil
	}
	c, logout, err := o.Connect(ctx)
	switch {
	case err != nil:
		return nil, nil, err
	case c == nil:
		return nil, nil, errors.New("ESXiOptions.Connect returned no client and no error")
	case logout == nil:
		logout = func() {}
	}
	return c, logout, nil
}

// recordFile is where the record of client's vCenter is kept: Record, or
// in RecordDir by vCenter's instance UUID; "" for none.
func (o ESXiOptions) recordFile(c *vim25.Client) string {
	if o.Record != "" || o.RecordDir == "" {
		return o.Record
	}
	id := c.ServiceContent.About.InstanceUuid
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return ""
	}
	return filepath.Join(o.RecordDir, "esxi-"+id+".json")
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
	if inv == nil {
		return nil, ErrNoInventory
	}
	r := o.begin(applyplan.TargetESXi)
	c, logout, err := o.session(ctx)
	if err != nil {
		r.end()
		return nil, err
	}
	defer logout()
	opts := o.engine(r)
	record := o.recordFile(c)
	if record != "" {
		rec, err := esxiapply.LoadRecord(record)
		if err != nil && !o.Full {
			fmt.Fprintf(r.track.Writer(), "esxi: note: the record of the last apply cannot be used (%v): every VM is read whole\n", err)
		}
		opts.Record = rec
	}
	res, err := esxiapply.Apply(ctx, c, inv, opts)
	out := &Result{Target: applyplan.TargetESXi}
	if res != nil && res.Record != nil && record != "" && !o.DryRun {
		if err := res.Record.Save(record); err != nil {
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
	if inv == nil {
		return nil, ErrNoInventory
	}
	r := o.begin(applyplan.TargetESXi)
	defer r.end()
	c, logout, err := o.session(ctx)
	if err != nil {
		return nil, err
	}
	defer logout()
	return esxiapply.Check(ctx, c, inv, o.engine(r))
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
	// Source names where URL came from in the errors about it ("GOVC_URL",
	// "--vcenter", "inventory vcenter": VCenterFromEnv sets it); default
	// "VCenter.URL".
	Source string
}

// The environment variables VCenterFromEnv reads, as govc reads them.
const (
	EnvVCenterURL      = vcenter.EnvURL      // host, https://host/sdk, user:pass@host
	EnvVCenterUsername = vcenter.EnvUsername // overrides the URL's user
	EnvVCenterPassword = vcenter.EnvPassword // overrides the URL's password
	EnvVCenterCACerts  = vcenter.EnvCACerts  // PEM files trusted for vCenter's certificate
)

// ErrNoVCenter is VCenterFromEnv's error when nothing names a vCenter.
var ErrNoVCenter = vcenter.ErrNoURL

// VCenterFromEnv is how to reach vCenter the way govc users expect (govc's
// environment variables): the URL from url (a flag, Source "--vcenter"),
// else $GOVC_URL, else the inventory's vcenter, each read by
// inventory.ParseVCenterURL; the credentials from GOVC_URL (the only
// source that may carry them), overridden by $GOVC_USERNAME and
// $GOVC_PASSWORD; $GOVC_INSECURE or insecure to skip TLS verification;
// $GOVC_TLS_CA_CERTS for CAs to trust. The error is ErrNoVCenter when none
// names one, or names the source whose value is wrong. AllowHTTP is not set.
func VCenterFromEnv(inv *inventory.Inventory, getenv func(string) string, url string, insecure bool) (VCenter, error) {
	cfg, err := vcenter.ConfigFromEnv(inv, getenv, url, insecure)
	if err != nil {
		return VCenter{}, err
	}
	return VCenter{URL: cfg.URL.String(), Username: cfg.Username, Password: cfg.Password, CACerts: cfg.CACerts,
		Insecure: cfg.Insecure, Source: cfg.Source}, nil
}

// config is v as internal/vcenter takes it; the URL is parsed again.
func (v VCenter) config() (vcenter.Config, error) {
	source := v.Source
	if source == "" {
		source = "VCenter.URL"
	}
	u, err := inventory.ParseVCenterURL(v.URL, false) // the CLI's grammar; credentials go in Username and Password
	if err != nil {
		return vcenter.Config{}, fmt.Errorf("%s: %w", source, err)
	}
	return vcenter.Config{URL: u, Username: v.Username, Password: v.Password, CACerts: v.CACerts, Insecure: v.Insecure,
		Timeout: v.Timeout, Source: source}, nil
}

// Host is the host (and port) of v's URL; "" when it does not parse.
func (v VCenter) Host() string {
	cfg, err := v.config()
	if err != nil {
		return ""
	}
	return cfg.URL.Host
}

// String describes the connection without the password: the URL, the
// user, and "(TLS not verified)" when Insecure.
func (v VCenter) String() string {
	cfg, err := v.config()
	if err != nil {
		return v.URL
	}
	return cfg.String()
}

// CheckTLS refuses, before connecting, an http:// URL unless AllowHTTP is
// set (the login sends the password with the request); the error names
// Source.
func (v VCenter) CheckTLS() error {
	cfg, err := v.config()
	if err != nil {
		return nil // ConnectVCenter says what is wrong with the URL
	}
	return cfg.RequireTLS(v.AllowHTTP)
}

// CheckCACerts reads the CACerts files as ConnectVCenter will, before
// anything is contacted: each a PEM file of the user's naming, opened
// without waiting on a named pipe (a pipe or device is refused). The
// error names the files; nil when CACerts is empty.
func (v VCenter) CheckCACerts() error {
	if v.CACerts == "" {
		return nil
	}
	_, err := vcenter.CAPool(v.CACerts)
	return err
}

// Connector is ConnectVCenter with v, as ESXiOptions.Connect takes it.
func (v VCenter) Connector() func(ctx context.Context) (*vim25.Client, func(), error) {
	return func(ctx context.Context) (*vim25.Client, func(), error) { return ConnectVCenter(ctx, v) }
}

// ConnectVCenter logs in and returns the client and a logout function.
func ConnectVCenter(ctx context.Context, v VCenter) (*vim25.Client, func(), error) {
	cfg, err := v.config()
	if err != nil {
		return nil, nil, err
	}
	if err := cfg.RequireTLS(v.AllowHTTP); err != nil {
		return nil, nil, err
	}
	s, err := vcenter.Connect(ctx, cfg, v.Conns, nil)
	if err != nil {
		return nil, nil, err
	}
	return s.Client, func() { s.Logout(ctx) }, nil
}
