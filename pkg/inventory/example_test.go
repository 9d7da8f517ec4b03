package inventory_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Load the reference inventory (what `rdggen example` prints) and read the
// values it derives: each host's container subnet and docker0 address.
func ExampleLoad() {
	inv, err := inventory.Load("cluster.yaml", inventory.ReferenceYAML)
	if err != nil {
		fmt.Println(err)
		return
	}
	h := inv.Hosts[0]
	fmt.Println(len(inv.Hosts), "hosts on", len(inv.ESXiHosts()), "ESXi hosts")
	fmt.Println(h.Name, h.Data.Address, h.Subnet, h.Bridge())
	// Output:
	// 8 hosts on 8 ESXi hosts
	// clx-mld-41 31.31.31.41/24 172.16.41.0/24 172.16.41.1/24
}

// A finding names the file, line, column, field and rule; nothing is
// generated from an invalid inventory.
func ExampleLoad_invalid() {
	src := []byte(`name: demo
switches:
  - {name: sw1, model: SN2700, onyx: 3.6.8190}
defaults:
  os: ubuntu-18.04
  data_interface: enp1f0
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
  - name: h1
    esxi: esx-1
    data: {address: 10.0.0.1/24, switch: sw1, port: 1/1}
  - name: h2
    esxi: esx-2
    data: {address: 10.0.0.1/24, switch: sw1, port: 1/40}
`)
	_, err := inventory.Load("cluster.yaml", src)
	fmt.Println(err)
	// Output:
	// cluster.yaml:15:21: hosts[1].data.address: duplicate data address 10.0.0.1 (also hosts[0])
	// cluster.yaml:15:21: hosts[1].data.address: duplicate container subnet 172.16.1.0/24 (also hosts[0])
	// cluster.yaml:15:53: hosts[1].data.port: 1/40 is outside SN2700 ports 1/1-1/32
}

// Build an inventory in Go, with the YAML file's shape: the same defaults,
// derivations and rules as a file.
func ExampleBuild() {
	inv, err := inventory.Build("demo", &inventory.Spec{
		Name:     "demo",
		Switches: []inventory.SwitchSpec{{Name: "sw1", Model: "SN2100", ONYX: new(inventory.MustVersion("3.9.3210"))}},
		Defaults: &inventory.HostDefaults{
			OS: new("ubuntu-20.04"), DataInterface: new("ens224"),
			GPUs: []inventory.GPUSpec{{Model: "A100-PCIE-40GB", MemoryGB: new(40)}},
			NIC:  &inventory.NICSpec{Model: "ConnectX-6", PF: "vmnic2", VFs: new(4)},
		},
		Hosts: []inventory.HostSpec{
			{Name: "gpu1", ESXi: "esx1.lab", Data: &inventory.DataSpec{Address: "10.10.10.1/24", Port: "1/1"}},
			{Name: "gpu2", ESXi: "esx2.lab", Data: &inventory.DataSpec{Address: "10.10.10.2/24", Port: "1/2"}},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range inv.Hosts {
		fmt.Println(h.Name, h.Data.Address, h.Subnet, h.Data.Switch, h.DataMTU)
	}
	// Output:
	// gpu1 10.10.10.1/24 172.16.1.0/24 sw1 1500
	// gpu2 10.10.10.2/24 172.16.2.0/24 sw1 1500
}
