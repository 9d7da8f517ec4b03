package horovod

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The GID index of the job (docs/rules.md#gid-index).
//
// NCCL_IB_GID_INDEX must name the GID table entry that holds the RoCE v2 GID
// of the host's data address. On a mlx5 port with one IPv4 address that is
// usually index 3 (0 and 1 are the link-local GID as RoCE v1 and v2, 2 and 3
// the IPv4 address as v1 and v2), but an IPv6 global address, a second IPv4
// address or a VLAN on the VF moves it, and a wrong index makes NCCL time
// out (NVIDIA/nccl#426, #769). So nothing here is a literal index: `rdggen
// run` reads every host's table before it launches, run.sh reads them
// through the workers when it launches, and both pass what they read.

// GIDIndexVar is NCCL's variable for the GID index.
const GIDIndexVar = "NCCL_IB_GID_INDEX"

// RankGIDVar carries the GID indexes of a job whose hosts differ, for
// RankWrapper: space-separated "END:INDEX" pairs in rank order, END the
// first rank after a run of hosts with the same INDEX ("4:3 6:5 16:3":
// ranks 0–3 use 3, 4–5 use 5, 6–15 use 3).
const RankGIDVar = "RDGGEN_GID_INDEXES"

// rankWrapperScript sets NCCL_IB_GID_INDEX from RankGIDVar for the rank the
// MPI launcher gave the process (Open MPI: OMPI_COMM_WORLD_RANK; Horovod's
// Gloo launcher: HOROVOD_RANK), then runs the rank's command. Ranks are
// placed as `-map-by slot` places them: the first host's slots first
// (RankHosts).
// It is one line, so that the launch line it is part of prints as one.
const rankWrapperScript = `r=${OMPI_COMM_WORLD_RANK:-${HOROVOD_RANK:-}}; ` +
	`case $r in ''|*[!0-9]*) echo "rdggen-rank: no MPI rank in the environment (OMPI_COMM_WORLD_RANK, HOROVOD_RANK)" >&2; exit 1 ;; esac; ` +
	`for e in $` + RankGIDVar + `; do if [ "$r" -lt "${e%%:*}" ]; then ` + GIDIndexVar + `=${e#*:}; export ` + GIDIndexVar + `; exec "$@"; fi; done; ` +
	`echo "rdggen-rank: rank $r has no GID index in ` + RankGIDVar + ` ($` + RankGIDVar + `)" >&2; exit 1`

// RankWrapper is the argv prefix that makes each rank set its host's GID
// index from RankGIDVar before it runs: sh -c SCRIPT rdggen-rank, then the
// rank's command.
func RankWrapper() []string { return []string{"sh", "-c", rankWrapperScript, "rdggen-rank"} }

// GIDEnv is the GID part of a job's environment for the hosts' GID indexes
// gids (inventory order, one per host): NCCL_IB_GID_INDEX=N when every host
// has the same index N; otherwise RankGIDVar with the ranks' runs, and wrap
// true: every rank must then run behind RankWrapper. It panics when gids
// does not have one index per host.
func GIDEnv(inv *inventory.Inventory, gids []int) (vars []EnvVar, wrap bool) {
	if len(gids) != len(inv.Hosts) {
		panic(fmt.Sprintf("horovod.GIDEnv: %d GID indexes for %d hosts", len(gids), len(inv.Hosts)))
	}
	type run struct{ end, index int }
	var runs []run
	rank := 0
	for i := range inv.Hosts {
		rank += inv.Hosts[i].Slots()
		if n := len(runs); n > 0 && runs[n-1].index == gids[i] {
			runs[n-1].end = rank
			continue
		}
		runs = append(runs, run{rank, gids[i]})
	}
	if len(runs) <= 1 {
		idx := 0
		if len(runs) == 1 {
			idx = runs[0].index
		}
		return []EnvVar{{GIDIndexVar, strconv.Itoa(idx)}}, false
	}
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = strconv.Itoa(r.end) + ":" + strconv.Itoa(r.index)
	}
	return []EnvVar{{RankGIDVar, strings.Join(parts, " ")}}, true
}

// SysfsGID is the RoCE GID of an IPv4 address as the kernel prints it in
// /sys/class/infiniband/<dev>/ports/<port>/gids/<index> (the IPv4-mapped
// IPv6 address in full, %pI6: 0000:0000:0000:0000:0000:ffff:1f1f:1f29 for
// 31.31.31.41).
func SysfsGID(a netip.Addr) string {
	b := a.As4()
	return fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3])
}

// RDMAPort is the port of the VF's RDMA device: a ConnectX VF has one.
const RDMAPort = 1

// gidLookupScript prints the index of the RoCE v2 GID $1 (SysfsGID) on the
// RDMA device hca's port under the sysfs root $2, or exits 1: the same
// table `rdggen check --target hosts` reads (drivers/infiniband/core/sysfs.c:
// ports/<p>/gids/<i>, gid_attrs/types/<i>); hca is held to [A-Za-z0-9_]{1,32}
// at validation. It runs in a worker, whose /sys
// shows the VM's RDMA devices.
func gidLookupScript(hca string) string {
	return `d="$2/class/infiniband/` + hca + `/ports/` + strconv.Itoa(RDMAPort) + `"
for f in "$d"/gids/*; do
  g=; read -r g <"$f" 2>/dev/null || continue
  [ "$g" = "$1" ] || continue
  i=${f##*/}; t=; read -r t <"$d/gid_attrs/types/$i" 2>/dev/null
  if [ "$t" = "RoCE v2" ]; then echo "$i"; exit 0; fi
done
exit 1
`
}
