package esxiapply

import (
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/cli/esx"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// ModuleParams reads and writes an ESXi host's kernel module parameter
// string — what `esxcli system module parameters list/set -m MODULE` show and
// set. KernelModuleParams (the default, one call per read) and
// ESXCLIModuleParams (esxcli itself, 4 calls per read) implement it over the
// vSphere API; tests may give a store of their own.
type ModuleParams interface {
	// Get returns the module's current parameter string, "" when none is set.
	Get(ctx context.Context, host Host, module string) (string, error)
	// Set replaces the module's whole parameter string (takes effect at the
	// host's next reboot).
	Set(ctx context.Context, host Host, module, params string) error
}

// Host names an ESXi host for ModuleParams.
type Host struct {
	Name string
	Ref  types.ManagedObjectReference
	// ModuleSystem is the host's configManager.kernelModuleSystem when
	// known (KernelModuleParams reads it otherwise).
	ModuleSystem *types.ManagedObjectReference
}

// ESXCLIModuleParams reaches real ESXi through vCenter: esxcli over the vSphere
// API (govmomi cli/esx: esx.NewExecutor(ctx, client, host), the same path as
// `govc host.esxcli`), no SSH to the host. Reading costs 4 round trips per host
// (RetrieveManagedMethodExecuter, RetrieveDynamicTypeManager, FetchCLIInfo,
// ExecuteSoap), setting one more.
type ESXCLIModuleParams struct {
	Client *vim25.Client
}

func (e ESXCLIModuleParams) executor(ctx context.Context, h Host) (*esx.Executor, error) {
	x, err := esx.NewExecutor(ctx, e.Client, h.Ref)
	if err != nil {
		return nil, fmt.Errorf("esxcli on %s: %w", h.Name, err)
	}
	return x, nil
}

// Get runs `esxcli system module parameters list -m MODULE` and joins the
// parameters that have a value into "name=value" words.
func (e ESXCLIModuleParams) Get(ctx context.Context, h Host, module string) (string, error) {
	x, err := e.executor(ctx, h)
	if err != nil {
		return "", err
	}
	res, err := x.Run(ctx, []string{"system", "module", "parameters", "list", "-m", module})
	if err != nil {
		return "", fmt.Errorf("esxcli system module parameters list -m %s on %s: %w", module, h.Name, err)
	}
	var words []string
	for _, v := range res.Values {
		name, value := first(v["Name"]), first(v["Value"])
		if name != "" && value != "" {
			words = append(words, name+"="+value)
		}
	}
	return strings.Join(words, " "), nil
}

// Set runs `esxcli system module parameters set -m MODULE -p PARAMS`.
func (e ESXCLIModuleParams) Set(ctx context.Context, h Host, module, params string) error {
	x, err := e.executor(ctx, h)
	if err != nil {
		return err
	}
	if _, err := x.Run(ctx, []string{"system", "module", "parameters", "set", "-m", module, "-p", params}); err != nil {
		return fmt.Errorf("esxcli system module parameters set -m %s on %s: %w", module, h.Name, err)
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// KernelModuleParams reads and sets a module's parameter string through the
// host's HostKernelModuleSystem, the vSphere API's own form of `esxcli
// system module parameters list/set` (and of `esxcfg-module -g/-s`): Get is
// one QueryConfiguredModuleOptionString call, Set one
// UpdateModuleOptionString, which replaces the whole string as `esxcli …
// set -p` does and takes effect when the module next loads (the host's
// reboot). Both reach the host through vCenter, no SSH. Source: VMware
// vSphere Web Services API reference (developer.broadcom.com/xapis/vsphere-web-services-api/latest/),
// managed object HostKernelModuleSystem, methods
// QueryConfiguredModuleOptionString and UpdateModuleOptionString (its
// options: "Option string to be passed to the kernel module at load
// time"), as govmomi's vim25/types carries that reference's text.
//
// The host's configManager.kernelModuleSystem comes in Host.ModuleSystem
// (Apply and Check read it with the host); when it is missing, Get and Set
// read it first (one more call).
type KernelModuleParams struct {
	Client *vim25.Client
}

func (k KernelModuleParams) system(ctx context.Context, h Host) (types.ManagedObjectReference, error) {
	if h.ModuleSystem != nil {
		return *h.ModuleSystem, nil
	}
	var host mo.HostSystem
	if err := property.DefaultCollector(k.Client).RetrieveOne(ctx, h.Ref, []string{"configManager.kernelModuleSystem"}, &host); err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("%s: read configManager.kernelModuleSystem: %w", h.Name, err)
	}
	if host.ConfigManager.KernelModuleSystem == nil {
		return types.ManagedObjectReference{}, fmt.Errorf("%s has no kernel module system (configManager.kernelModuleSystem is unset)", h.Name)
	}
	return *host.ConfigManager.KernelModuleSystem, nil
}

// Get returns the module's configured option string ("" when none is set),
// spaces trimmed.
func (k KernelModuleParams) Get(ctx context.Context, h Host, module string) (string, error) {
	ref, err := k.system(ctx, h)
	if err != nil {
		return "", err
	}
	res, err := methods.QueryConfiguredModuleOptionString(ctx, k.Client, &types.QueryConfiguredModuleOptionString{This: ref, Name: module})
	if err != nil {
		return "", fmt.Errorf("QueryConfiguredModuleOptionString: %w", err)
	}
	return strings.TrimSpace(res.Returnval), nil
}

// Set replaces the module's option string.
func (k KernelModuleParams) Set(ctx context.Context, h Host, module, params string) error {
	ref, err := k.system(ctx, h)
	if err != nil {
		return err
	}
	if _, err := methods.UpdateModuleOptionString(ctx, k.Client, &types.UpdateModuleOptionString{This: ref, Name: module, Options: params}); err != nil {
		return fmt.Errorf("UpdateModuleOptionString: %w", err)
	}
	return nil
}

// hostOf names a planned host for ModuleParams.
func hostOf(hp *hostPlan) Host {
	return Host{Name: hp.name, Ref: hp.host.Self, ModuleSystem: hp.host.ConfigManager.KernelModuleSystem}
}
