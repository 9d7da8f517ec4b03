package railpair_test

import (
	"fmt"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/railpair"
)

// BenchmarkPair pairs one VM on a host of 2 sockets × 4 PCIe switches × (2
// GPUs + 2 NIC ports), 16 GPUs on 16 rails and 8 GPUs on 4 rails, with
// 400 other PCI functions listed (a real host lists hundreds): the cost
// apply pays per VM.
func BenchmarkPair(b *testing.B) {
	tree := vcsimtest.SharedSwitches(2, 4, 2, 2)
	h := host(tree)
	for i := 0; i < 400; i++ {
		h.Devices = append(h.Devices, types.HostPciDevice{Id: fmt.Sprintf("0001:%02x:%02x.%d", i/32, i%32, i%8)})
	}
	for _, c := range []struct{ gpus, rails int }{{16, 16}, {8, 4}} {
		b.Run(fmt.Sprintf("%dGPUs-%drails", c.gpus, c.rails), func(b *testing.B) {
			r := railpair.Request{Rails: tree.VMNICs()[:c.rails], GPUs: empty(c.gpus), Free: tree.GPUs()}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := railpair.Pair(h, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
