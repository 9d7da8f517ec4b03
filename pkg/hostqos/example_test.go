package hostqos_test

import (
	"fmt"
	"net/netip"

	"github.com/rdggen/rdggen/pkg/hostqos"
)

// Find the GID index NCCL_IB_GID_INDEX must name: the RoCE v2 entry of the
// host's data address in the port's GID table (as `rdggen check` reads it
// from sysfs, one "INDEX<TAB>GID<TAB>TYPE<TAB>NDEV" line per slot).
func ExampleFindRoCEv2() {
	table := hostqos.ParseGIDTable([]byte(
		"0\tfe80:0000:0000:0000:0250:56ff:fe9a:1b2c\tIB/RoCE v1\tens224\n" +
			"1\tfe80:0000:0000:0000:0250:56ff:fe9a:1b2c\tRoCE v2\tens224\n" +
			"2\t0000:0000:0000:0000:0000:ffff:1f1f:1f29\tIB/RoCE v1\tens224\n" +
			"3\t0000:0000:0000:0000:0000:ffff:1f1f:1f29\tRoCE v2\tens224\n"))
	g, ok := hostqos.FindRoCEv2(table, netip.MustParseAddr("31.31.31.41"))
	fmt.Println(g, ok)
	// Output: index 3: RoCE v2 31.31.31.41 on ens224 true
}

// The RDMA path MTU a RoCE port gets on an Ethernet MTU of 1500 and 9000
// bytes.
func ExampleRoCEPathMTU() {
	fmt.Println(hostqos.RoCEPathMTU(1500), hostqos.RoCEPathMTU(9000))
	// Output: 1024 4096
}
