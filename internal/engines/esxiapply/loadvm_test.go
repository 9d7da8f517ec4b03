package esxiapply

import (
	"reflect"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// loadVMIDs gives what mo.LoadObjectContent gives, for the usual VM and
// for the ones it hands to mo.LoadObjectContent (no host, another
// property, a missing property).
func TestLoadVMIDsAsLoadObjectContent(t *testing.T) {
	t.Parallel()
	host := types.ManagedObjectReference{Type: "HostSystem", Value: "host-21"}
	vm := func(v string) types.ManagedObjectReference {
		return types.ManagedObjectReference{Type: "VirtualMachine", Value: v}
	}
	ocs := []types.ObjectContent{
		{Obj: vm("vm-1"), PropSet: []types.DynamicProperty{
			{Name: "name", Val: "a"}, {Name: "runtime.host", Val: host}, {Name: "config.changeVersion", Val: "2026-12-03T13:04:40.123Z"},
		}},
		{Obj: vm("vm-2"), PropSet: []types.DynamicProperty{{Name: "name", Val: "b"}}},
		{Obj: vm("vm-3"), PropSet: []types.DynamicProperty{{Name: "name", Val: "c"}, {Name: "runtime.powerState", Val: types.VirtualMachinePowerStatePoweredOn}}},
		{Obj: vm("vm-4"), PropSet: []types.DynamicProperty{{Name: "name", Val: "d"}},
			MissingSet: []types.MissingProperty{{Path: "config.changeVersion", Fault: types.LocalizedMethodFault{Fault: &types.NotAuthenticated{}}}}},
	}
	fast, ok := vmIDOf(ocs[0])
	if !ok {
		t.Fatal("vmIDOf refused the usual VM")
	}
	for _, oc := range ocs[1:] {
		if _, ok := vmIDOf(oc); ok && oc.Obj.Value != "vm-2" {
			t.Errorf("vmIDOf took %s", oc.Obj.Value)
		}
	}
	var want []mo.VirtualMachine
	if err := mo.LoadObjectContent(ocs[:3], &want); err != nil {
		t.Fatal(err)
	}
	got, err := loadVMIDs(ocs[:3])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(fast, want[0]) {
		t.Errorf("loadVMIDs:\n%+v\nmo.LoadObjectContent:\n%+v", got, want)
	}
	_, wantErr := mo.ObjectContentToType(ocs[3])
	if _, err := loadVMIDs(ocs[3:]); (err == nil) != (wantErr == nil) {
		t.Errorf("missing property: loadVMIDs error %v, mo.LoadObjectContent %v", err, wantErr)
	}
}
