package esxiapply

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/vim25/mo"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// PassthroughSource is where the per-VM PCI passthrough limits come from.
const PassthroughSource = "Broadcom KB 309986, https://knowledge.broadcom.com/external/article/309986"

// PassthroughLimit is how many PCI passthrough (DirectPath I/O) devices
// ESXi version esxi ("8.0.2") lets one VM of hardware version hw ("vmx-21")
// have: 16 up to 7.x, 32 on 8.0, 64 on 8.0 U1, 128 on 8.0 U2 and later with
// hardware version 21 or later (64 with an older one) (PassthroughSource).
// An unreadable version gives 16, the limit every release has.
func PassthroughLimit(esxi, hw string) int {
	v, err := inventory.ParseVersion(esxi)
	if err != nil {
		return 16
	}
	hwv, _ := strconv.Atoi(strings.TrimPrefix(hw, "vmx-"))
	switch {
	case !v.AtLeast(8, 0):
		return 16
	case v.AtLeast(8, 0, 2) && hwv >= 21:
		return 128
	case v.AtLeast(8, 0, 1):
		return 64
	}
	return 32
}

// passthroughLimitErr refuses h's GPUs when they are more than its ESXi
// host (as vCenter reports its version) lets a VM of hardware version hw
// have; whose says whose hardware version that is ("its", "the template
// T's"). The SR-IOV adapter of a VM of one rail is a network adapter and
// is not counted; a VM of several rails counts one VF per rail, as
// validation does (railVFs).
func passthroughLimitErr(host *mo.HostSystem, hw string, h *inventory.Host, whose string) error {
	if host == nil || host.Config == nil {
		return nil
	}
	ver := host.Config.Product.Version
	limit := PassthroughLimit(ver, hw)
	vfs := railVFs(h)
	if len(h.GPUs)+vfs <= limit {
		return nil
	}
	fix := "list fewer GPUs for " + h.Name
	if limit < 128 {
		fix = "upgrade ESXi host " + h.ESXi + " (8.0 U2 with hardware version 21 takes 128), or " + fix
	}
	what := fmt.Sprintf("%d GPUs", len(h.GPUs))
	if vfs > 0 {
		what = fmt.Sprintf("%d GPUs and %d rails' VFs (%d devices)", len(h.GPUs), vfs, len(h.GPUs)+vfs)
		fix += " or fewer rails"
	}
	return fixable(fmt.Errorf("%s: ESXi %s on %s with %s hardware version %s takes at most %d PCI passthrough devices per VM (%s)",
		what, orUnset(ver), h.ESXi, whose, orUnset(hw), limit, PassthroughSource),
		fmt.Sprintf("at most %d passthrough devices", limit), fix)
}
