R=''
N=0123456789abcdef
# The prelude of every script rdggen sends (internal/transport/remote): it follows
# R (the root prefix, "" for the host's own root) and N (the nonce that frames
# the results). Every command's stdin is /dev/null: the script itself is on
# the shell's stdin. `fr NAME CMD...` runs CMD and frames its output and
# status as result NAME; `step NAME CMD...` is the same for a change, as
# result "step:NAME".
umask 022
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH
export RDGGEN_ROOT="$R"
fr() { printf '@rdggen %s %s\n' "$N" "$1"; shift; "$@" </dev/null 2>&1; printf '\n@rdggen %s end %s\n' "$N" "$?"; }
step() { n=$1; shift; fr "step:$n" "$@"; }
# shellcheck disable=SC2016 # RS holds a script, run by sh -c "$RS": its expansions are its own
RS='#!/bin/sh
# rdggen: in-VM side of lossless RoCE (DSCP-based QoS) on clx-mld-41 (cluster clx-mld).
# Installed as /usr/local/sbin/rdggen-roce-qos; rdggen-roce-qos.service runs it at boot. Safe to run again.
# Usage: rdggen-roce-qos [apply|check]   check changes nothing and exits 1 when something differs.
#
# Set here, on the VM'\''s ConnectX VF enp1f0 (each path probed; "n/a" when absent, never a failure):
#   tcp_ecn = 1: TCP negotiates ECN (default 2 only answers); TCP only, not RoCE
#   cma_roce_tos = 106: default ToS of RDMA-CM QPs: DSCP 26 << 2 | ECT(0) (configfs rdma_cm, what cma_roce_tos writes)
#   traffic_class = 106: ToS of verbs QPs that do not use RDMA-CM (MLNX_OFED sysfs; NCCL also gets NCCL_IB_TC)
#   ecn_np = 1: ECN notification point on priority 3 (answers CE marks with CNPs); PF only
#   ecn_rp = 1: ECN reaction point on priority 3 (DCQCN rate limiting on CNPs); PF only
# Not applicable on a VF: trust DSCP, PFC on priority 3, ECN on priority 3 with CNPs at DSCP 48/priority 6 are port settings of the PF, set by ESXi in esxi/esx-41.example.sh.
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
		# mkdir in configfs creates the device'\''s rdma_cm group and its ports/ tree.
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
report "pf_qos esxi not applicable on a VF: trust DSCP, PFC on priority 3, ECN on priority 3 with CNPs at DSCP 48/priority 6 are port settings of the PF, set by ESXi in esxi/esx-41.example.sh"
exit $rc
'
data_dev=enp1f0
fwd_proc=net/ipv4/conf/all/forwarding
fw_chain=RDGGEN-CONTAINERS
user_chain=DOCKER-USER
nat_chain=RDGGEN-POSTROUTING
bridge=docker0
pm_sysfs=nvidia_peermem
pm_legacy=nv_peer_mem
pm_module=nvidia-peermem
# pm: the peer-memory module's state, one fact a line (internal/engines/hostapply,
# parsePeermem): loaded, legacy, memory_peers, version V, module, driver V,
# open, kernel V, model M. Set by Go before it:
#   pm_sysfs   the module's name under /sys/module (nvidia_peermem)
#   pm_legacy  the legacy module's (nv_peer_mem)
#   pm_module  the module's file name (nvidia-peermem)
pm() {
	[ -d "$R/sys/module/$pm_sysfs" ] && echo loaded
	[ -d "$R/sys/module/$pm_legacy" ] && echo legacy
	[ -e "$R/sys/kernel/mm/memory_peers/nv_mem/version" ] && echo memory_peers
	v=; read -r v 2>/dev/null <"$R/sys/module/$pm_sysfs/version" && echo "version $v"
	if [ -z "$R" ]; then modinfo -n "$pm_module" >/dev/null 2>&1 && echo module
	else [ -n "$(find "$R/lib/modules" -name "$pm_module.ko*" 2>/dev/null | head -n 1)" ] && echo module; fi
	v=; read -r v 2>/dev/null <"$R/sys/module/nvidia/version" && echo "driver $v"
	grep -q "Open Kernel Module" "$R/proc/driver/nvidia/version" 2>/dev/null && echo open
	v=; read -r v 2>/dev/null <"$R/proc/sys/kernel/osrelease" && echo "kernel $v"
	for f in "$R"/proc/driver/nvidia/gpus/*/information; do [ -f "$f" ] && sed -n 's/^Model:[[:space:]]*/model /p' "$f"; done
	return 0
}
# The hosts probe (internal/engines/hostapply): the read-only part of
# `rdggen apply --target hosts`, which its apply script sends again to verify.
# It starts few processes (one stat and one cat for all files, builtins where
# possible): it is what an up-to-date host costs. Set by Go before it:
#   data_dev     the data interface (inventory: hosts[].data_interface)
#   fwd_proc     the forwarding sysctl's file under /proc/sys
#   fw_chain     rdggen's filter chain; user_chain the chain that jumps to it
#   nat_chain    rdggen's nat chain; bridge Docker's bridge
#   RS           the RoCE script (run as sh -c "$RS" rdggen-roce-qos check|apply)
# and then calls probe_files PATH... and probe_host [NETPLAN_DIR...].

# probe_files PATH...: every managed file, links by readlink, regular files
# by one stat and one cat (results "l:PATH", "o:PATH", "stat", "cat").
probe_files() {
	n=$#
	for p do
		f="$R$p"
		if [ -L "$f" ]; then fr "l:$p" readlink -- "$f"
		elif [ -f "$f" ]; then set -- "$@" "$f"
		elif [ -e "$f" ]; then fr "o:$p" true
		fi
	done
	shift "$n"
	if [ $# -gt 0 ]; then fr stat stat -c '%s %a %n' -- "$@"; fr cat cat -- "$@"; fi
}

nodockerd() { return 127; }

# probe_host [NETPLAN_DIR...]: forwarding, the data interface's addresses and
# link, the netplan files of each directory given (none when the OS does not
# use netplan), the routing table, rdggen's iptables chains and the chains
# that jump to them, docker0, dockerd's version, the RoCE script's check and
# the peer-memory module (peermem.sh).
probe_host() {
	v=; read -r v <"/proc/sys/$fwd_proc"; fr forwarding echo "$v"
	fr addr ip -4 -o addr show dev "$data_dev"
	fr link ip -o link show dev "$data_dev"
	for d do
		for f in "$R$d"/*.yaml; do [ -f "$f" ] && fr "np:${f#"$R"}" cat -- "$f"; done
	done
	fr routes ip -4 route show table main
	fr chain iptables -w -S "$fw_chain"
	fr dockeruser iptables -w -S "$user_chain"
	fr nat iptables -w -t nat -S "$nat_chain"
	fr postrouting iptables -w -t nat -S POSTROUTING
	fr docker0 ip -4 -o addr show dev "$bridge"
	if command -v dockerd >/dev/null 2>&1; then fr dockerd dockerd --version; else fr dockerd nodockerd; fi
	fr roce env RDGGEN_SYSFS="$R/sys" sh -c "$RS" rdggen-roce-qos check
	fr peermem pm
}
probe_files /etc/docker/daemon.json /etc/sysctl.d/60-rdggen-forwarding.conf /etc/network/if-up.d/rdggen-routes /etc/rdggen/firewall.sh /etc/systemd/system/rdggen-firewall.service /usr/local/sbin/rdggen-roce-qos /etc/systemd/system/rdggen-roce-qos.service /etc/modules-load.d/60-rdggen-nvidia-peermem.conf /etc/systemd/system/docker.service.wants/rdggen-firewall.service /etc/systemd/system/multi-user.target.wants/rdggen-roce-qos.service /etc/netplan/60-rdggen.yaml /etc/rdggen/firewall.rules
probe_host
hca=mlx5_0
port=1
# The RDMA device's port (internal/engines/hostapply, rdmaProbe): the device list,
# the port's state and link layer, its GID table as "INDEX<TAB>GID<TAB>TYPE<TAB>NDEV"
# lines (drivers/infiniband/core/sysfs.c: ports/<p>/gids/<i>,
# gid_attrs/types/<i>, gid_attrs/ndevs/<i>; an unused slot reads as the zero
# GID and its attributes fail to read), and ibv_devinfo's port view when it
# is installed. Paths are under $R (the root prefix). Set by Go before it:
#   hca   the RDMA device (inventory: horovod.hca)
#   port  its port number
ib="$R/sys/class/infiniband"
fr ibdevs ls -1 "$ib"
p="$ib/$hca/ports/$port"
gidtab() {
	for f in "$1"/gids/*; do
		[ -f "$f" ] || continue
		i=${f##*/}; g=; t=; n=
		read -r g 2>/dev/null <"$f" || continue
		case $g in
		0000:0000:0000:0000:0000:0000:0000:0000) ;;
		*) read -r t 2>/dev/null <"$1/gid_attrs/types/$i"; read -r n 2>/dev/null <"$1/gid_attrs/ndevs/$i";;
		esac
		printf '%s\t%s\t%s\t%s\n' "$i" "$g" "$t" "$n"
	done
}
if [ -d "$p" ]; then fr ibstate cat "$p/state"; fr iblayer cat "$p/link_layer"; fr gids gidtab "$p"; fi
if [ -z "$R" ] && command -v ibv_devinfo >/dev/null 2>&1; then fr ibvinfo ibv_devinfo -d "$hca" -i "$port"; fi
nvidia_vendor=0x10de
# The guest's readiness for GPUs and RDMA (internal/engines/hostapply, guestProbe;
# read-only):
#   - gpus: per NVIDIA display controller on the PCI bus (vendor $nvidia_vendor,
#     class 0x0300xx or 0x0302xx) "BDF<TAB>BAR1 resource line<TAB>yes|no", yes
#     when the driver took it (/proc/driver/nvidia/gpus/BDF); line 2 of
#     /sys/bus/pci/devices/BDF/resource is BAR1, "start end flags" in hex;
#   - efi: /sys/firmware/efi exists;
#   - nvidia: the loaded driver's version (/sys/module/nvidia/version);
#   - verbs: the RDMA devices userspace sees (ibv_devices when installed and
#     no root prefix; else the kernel's verbs devices,
#     /sys/class/infiniband_verbs/uverbs*/ibdev), one per line, after a
#     "source" line.
# Then runtime.sh or runtime-old.sh, by Docker's version. Set by Go before it:
#   nvidia_vendor  NVIDIA's PCI vendor id
gpus() {
	for d in "$R"/sys/bus/pci/devices/*; do
		v=; read -r v 2>/dev/null <"$d/vendor" || continue
		[ "$v" = "$nvidia_vendor" ] || continue
		c=; read -r c 2>/dev/null <"$d/class"
		case $c in 0x0300*|0x0302*) ;; *) continue ;; esac
		b=${d##*/}
		r=$(sed -n 2p "$d/resource" 2>/dev/null)
		t=no; [ -e "$R/proc/driver/nvidia/gpus/$b" ] && t=yes
		printf '%s\t%s\t%s\n' "$b" "$r" "$t"
	done
}
fr gpus gpus
fr efi test -d "$R/sys/firmware/efi"
fr nvidia cat "$R/sys/module/nvidia/version"
verbs() {
	if [ -z "$R" ] && command -v ibv_devices >/dev/null 2>&1; then
		echo source ibv_devices; ibv_devices | awk 'NR > 2 { print $1 }'
	else
		echo source /sys/class/infiniband_verbs; cat "$R"/sys/class/infiniband_verbs/uverbs*/ibdev 2>/dev/null
	fi
	return 0
}
fr verbs verbs
# runtime, before Docker 19.03 (internal/engines/hostapply, guestProbe): the runtimes
# of `docker info` (without a root prefix; else daemon.json's, which the
# probe reads anyway).
if [ -z "$R" ] && command -v docker >/dev/null 2>&1; then fr runtime docker info --format '{{json .Runtimes}}'; fi
printf '@rdggen %s done\n' "$N"
