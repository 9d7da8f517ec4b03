#!/bin/sh
# rdggen: in-VM side of lossless RoCE (DSCP-based QoS) on h31 (cluster brk).
# Installed as /usr/local/sbin/rdggen-roce-qos; rdggen-roce-qos.service runs it at boot. Safe to run again.
# Usage: rdggen-roce-qos [apply|check]   check changes nothing and exits 1 when something differs.
#
# Set here, on the VM's ConnectX VF enp1f0 (each path probed; "n/a" when absent, never a failure):
#   tcp_ecn = 1: TCP negotiates ECN (default 2 only answers); TCP only, not RoCE
#   cma_roce_tos = 106: default ToS of RDMA-CM QPs: DSCP 26 << 2 | ECT(0) (configfs rdma_cm, what cma_roce_tos writes)
#   traffic_class = 106: ToS of verbs QPs that do not use RDMA-CM (MLNX_OFED sysfs; NCCL also gets NCCL_IB_TC)
#   ecn_np = 1: ECN notification point on priority 3 (answers CE marks with CNPs); PF only
#   ecn_rp = 1: ECN reaction point on priority 3 (DCQCN rate limiting on CNPs); PF only
# Not applicable on a VF: trust DSCP, PFC on priority 3, ECN on priority 3 with CNPs at DSCP 48/priority 6 are port settings of the PF, set by ESXi in esxi/esx-31.example.sh.
# NCCL does not use RDMA-CM; horovod/run.sh passes NCCL_IB_TC=106.
set -u
mode=${1:-apply}
case $mode in apply|check) ;; *) echo "usage: $0 [apply|check]" >&2; exit 2;; esac
sys=${RDGGEN_SYSFS:-/sys}
proc=${RDGGEN_PROCFS:-/proc}
iface=enp1f0
rc=0
report() { echo "rdggen-roce $*"; }
# put NAME FILE VALUE: write VALUE unless FILE already holds it.
put() {
	cur=$(cat "$2" 2>/dev/null) || { report "$1 failed cannot read $2"; rc=1; return; }
	cur=${cur##*=}  # MLNX_OFED prints traffic_class as "Global tclass=106"
	if [ "$cur" = "$3" ]; then report "$1 ok $3"; return; fi
	if [ "$mode" = check ]; then report "$1 differs $cur -> $3"; rc=1; return; fi
	if echo "$3" 2>/dev/null >"$2"; then report "$1 set $cur -> $3"; else report "$1 failed cannot write $2"; rc=1; fi
}

put tcp_ecn "$proc/sys/net/ipv4/tcp_ecn" 1

# The RDMA device behind the data interface (mlx5_N of the VF).
dev=
for d in "$sys/class/net/$iface/device/infiniband/"*; do [ -d "$d" ] && dev=${d##*/} && break; done
if [ -z "$dev" ]; then
	report "rdma_device n/a no RDMA device behind $iface (mlx5_ib not loaded, or not a ConnectX function)"
	report "cma_roce_tos n/a needs the RDMA device"
	report "traffic_class n/a needs the RDMA device"
else
	report "rdma_device ok $dev"
	cfg=$sys/kernel/config/rdma_cm
	if [ ! -d "$cfg" ]; then
		report "cma_roce_tos n/a $cfg absent (configfs not mounted or rdma_cm not loaded)"
	elif [ ! -d "$cfg/$dev" ] && [ "$mode" = check ]; then
		report "cma_roce_tos differs unset -> 106"; rc=1
	else
		# mkdir in configfs creates the device's rdma_cm group and its ports/ tree.
		[ -d "$cfg/$dev" ] || mkdir "$cfg/$dev" 2>/dev/null
		put cma_roce_tos "$sys/kernel/config/rdma_cm/$dev/ports/1/default_roce_tos" 106
	fi
	tc="$sys/class/infiniband/$dev/tc/1/traffic_class"
	if [ -e "$tc" ]; then
		put traffic_class "$tc" 106
	else
		report "traffic_class n/a $tc absent (upstream mlx5 has no tc/ directory; NCCL_IB_TC covers NCCL)"
	fi
fi

# ECN per priority: only a function that exposes ecn/ (a PF) takes it.
if [ -e "$sys/class/net/enp1f0/ecn/roce_np/enable/3" ]; then put ecn_np "$sys/class/net/enp1f0/ecn/roce_np/enable/3" 1; else report "ecn_np n/a not applicable on a VF (no $iface/ecn in sysfs): set on the PF by ESXi"; fi
if [ -e "$sys/class/net/enp1f0/ecn/roce_rp/enable/3" ]; then put ecn_rp "$sys/class/net/enp1f0/ecn/roce_rp/enable/3" 1; else report "ecn_rp n/a not applicable on a VF (no $iface/ecn in sysfs): set on the PF by ESXi"; fi
report "pf_qos esxi not applicable on a VF: trust DSCP, PFC on priority 3, ECN on priority 3 with CNPs at DSCP 48/priority 6 are port settings of the PF, set by ESXi in esxi/esx-31.example.sh"
exit $rc
