// Package railpair pairs the GPUs of a VM with its rails on one ESXi host,
// from what the host reports about its PCI tree: each GPU goes with a rail
// whose NIC port (the physical function, PF, the VM's VF of that rail comes
// from) sits under the same PCIe switch, else on the same NUMA node, else
// with a warning that names the GPU, the PF and their nodes.
//
// It is pure: typed values in (the vSphere API's own types, as the property
// collector returns them), typed values and text out; nothing is read from
// or written to a machine here.
//
//   - [Pair] takes the host's PCI devices (hardware.pciDevice, with each
//     device's parentBridge), its NUMA nodes (hardware.numaInfo, with each
//     node's pciId list), its uplinks (config.network.pnic, the vmnic → PCI
//     address mapping) and one VM's [Request] (the rails' vmnics, the GPUs
//     the VM gets or the free ones to choose from, GPUs per rail), and
//     returns the [Pairing]. GPUs the request fixes are checked, not moved.
//     [Pairing.Lines] and [Pairing.Warnings] are its plan text.
//   - [Pairing.VNUMA] gives the virtual NUMA node each of the VM's
//     passthrough devices should be assigned (VirtualDevice.numaNode,
//     hardware version 20 and later), or says why it cannot.
//   - [DeviceGroups] reports which vendor device groups the host offers
//     (ConfigTarget.vendorDeviceGroupInfo) fit a rail's GPU and NIC; a report
//     only, nothing requires them.
//
// The rules, with their sources, are in docs/rules.md (section "GPU–rail
// pairing") and on each function. This is a package of its own rather than
// part of pkg/vmx because pkg/vmx derives values from the inventory alone
// and never fails, while the pairing reads what an ESXi host reports (the
// vSphere API's types) and can be impossible or poor.
package railpair
