package apply

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/fakeos"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// bench's switch counters reach an OS that only its registration makes
// known (fakeos): each switch with a mgmt address through its engine's
// Counters, named as pkg/bench names a host's port; a switch without one
// is not read.
func TestBenchCountersFakeOS(t *testing.T) {
	if err := fakeos.Register(); err != nil {
		t.Fatal(err)
	}
	sim, err := fakeos.NewSim("tk", "port fp1 mtu 9216", "port fp2 mtu 9216")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	src := `name: fake
switches:
  - {name: fk1, model: SN2100, fakeos: 1.0, mgmt: "` + sim.Addr() + `"}
  - {name: fk2, model: SN2100, fakeos: 1.0}
defaults: {os: ubuntu-18.04, data_interface: ens224, gpus: [{model: V100-PCIE-16GB, memory_gb: 16}], nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}}
hosts:
  - {name: a, esxi: esx-a, data: {address: 10.0.0.1/24, switch: fk1, port: 1/1}}
  - {name: b, esxi: esx-b, data: {address: 10.0.0.2/24, switch: fk2, port: 1/1}}
`
	inv, err := inventory.Load("fake.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	o := SwitchOptions{OS: map[inventory.SwitchOS]any{fakeos.OS: fakeos.Options{Token: "tk"}}}
	r := o.begin("bench")
	got, err := benchCounters(inv, o, r)(context.Background())
	r.end()
	if s := fmt.Sprint(got); err != nil || s != "[{fk1 fp1 1 0} {fk1 fp2 1 0}]" {
		t.Errorf("counters: %v, %s", err, s)
	}
	o.OS[fakeos.OS] = fakeos.Options{Token: "wrong"}
	if _, err := benchCounters(inv, o, r)(context.Background()); err == nil || !strings.Contains(err.Error(), "fk1: login: token refused") {
		t.Errorf("a refused token: %v", err)
	}
}
