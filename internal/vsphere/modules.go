package vsphere

import (
	"context"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/cli/esx"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/types"
)

// ModuleParams reads and writes an ESXi host's kernel module parameter
// string — what `esxcli system module parameters list/set -m MODULE` show and
// set. It is an interface because vcsim does not model that esxcli namespace:
// tests give an in-memory store (internal/testing/vcsimtest), real hosts use
// ESXCLIModuleParams.
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
