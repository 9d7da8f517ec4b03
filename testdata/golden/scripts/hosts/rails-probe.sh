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
# rdggen: in-VM side of lossless RoCE (DSCP-based QoS) on node1 (cluster firstboot).
# Installed as /usr/local/sbin/rdggen-roce-qos; rdggen-roce-qos.service runs it at boot. Safe to run again.
# Usage: rdggen-roce-qos [apply|check]   check changes nothing and exits 1 when something differs.
#
# Set here, on the VM'\''s ConnectX VF ens224 (each path probed; "n/a" when absent, never a failure):
#   tcp_ecn = 1: TCP negotiates ECN (default 2 only answers); TCP only, not RoCE
#   cma_roce_tos = 106: default ToS of RDMA-CM QPs: DSCP 26 << 2 | ECT(0) (configfs rdma_cm, what cma_roce_tos writes)
#   traffic_class = 106: ToS of verbs QPs that do not use RDMA-CM (MLNX_OFED sysfs; NCCL also gets NCCL_IB_TC)
#   ecn_np = 1: ECN notification point on priority 3 (answers CE marks with CNPs); PF only
#   ecn_rp = 1: ECN reaction point on priority 3 (DCQCN rate limiting on CNPs); PF only
# Not applicable on a VF: trust DSCP, PFC on priority 3, ECN on priority 3 with CNPs at DSCP 48/priority 6 are port settings of the PF, set by ESXi in esxi/esx-1.example.sh.
# NCCL does not use RDMA-CM; horovod/run.sh passes NCCL_IB_TC=106.
set -u
mode=${1:-apply}
case $mode in apply|check) ;; *) echo "usage: $0 [apply|check]" >&2; exit 2;; esac
sys=${RDGGEN_SYSFS:-/sys}
proc=${RDGGEN_PROCFS:-/proc}
iface=ens224
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
if [ -e "$sys/class/net/ens224/ecn/roce_np/enable/3" ]; then put ecn_np "$sys/class/net/ens224/ecn/roce_np/enable/3" 1; else report "ecn_np n/a not applicable on a VF (no $iface/ecn in sysfs): set on the PF by ESXi"; fi
if [ -e "$sys/class/net/ens224/ecn/roce_rp/enable/3" ]; then put ecn_rp "$sys/class/net/ens224/ecn/roce_rp/enable/3" 1; else report "ecn_rp n/a not applicable on a VF (no $iface/ecn in sysfs): set on the PF by ESXi"; fi
report "pf_qos esxi not applicable on a VF: trust DSCP, PFC on priority 3, ECN on priority 3 with CNPs at DSCP 48/priority 6 are port settings of the PF, set by ESXi in esxi/esx-1.example.sh"
exit $rc
'
data_dev=ens224
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
probe_files /etc/docker/daemon.json /etc/sysctl.d/60-rdggen-forwarding.conf /etc/netplan/60-rdggen.yaml /etc/rdggen/firewall.sh /etc/systemd/system/rdggen-firewall.service /usr/local/sbin/rdggen-roce-qos /etc/systemd/system/rdggen-roce-qos.service /etc/modules-load.d/60-rdggen-nvidia-peermem.conf /etc/netplan/61-rdggen-rails.yaml /etc/sysctl.d/60-rdggen-rails.conf /etc/rdggen/nccl-topology.xml /usr/local/sbin/rdggen-nccl-topology /etc/systemd/system/rdggen-nccl-topology.service /etc/systemd/system/docker.service.wants/rdggen-firewall.service /etc/systemd/system/multi-user.target.wants/rdggen-roce-qos.service /etc/systemd/system/multi-user.target.wants/rdggen-nccl-topology.service /etc/network/if-up.d/rdggen-routes /etc/rdggen/firewall.rules
probe_host /lib/netplan /etc/netplan /run/netplan
rp_tables='100 101'
rp_gw='0 ens224 10.20.0.254
1 rail1 10.20.1.254
'
rp_proc='net/ipv4/conf/all/arp_ignore net/ipv4/conf/all/arp_announce net/ipv4/conf/all/rp_filter'
# The rails' part of the hosts probe (internal/engines/hostapply), for a VM
# with several rails: the live state that apply and check compare with what
# pkg/railnet sets up. Read-only; live state, so none of it is under $R.
# Set by Go before it:
#   rp_tables  each rail's routing table number, in rail order ("100 101")
#   rp_proc    the rails' sysctls as paths under /proc/sys
#              ("net/ipv4/conf/all/arp_ignore …")
#   rp_gw      one line per rail (for ping_rails, which only check runs), "<rail> <interface> <gateway>"
#
# probe_rails: results
#   rlinks   ip -o link show: every interface, its flags, MTU, state, MAC
#   raddrs   ip -4 -o addr show: every interface's IPv4 addresses
#   rrules   ip -4 rule show
#   rtnames  the table names iproute2 prints instead of numbers (its
#            rt_tables files, the same ones rails.sh of pkg/railnet reads)
#   rt:N     ip -4 route show table N, per rail's table
#   rsysctl  "<path> <value>" per sysctl ("-" when it cannot be read)
# ping_rails: result rp:<rail> per rail, ping -I <interface> of its gateway
# (two echo requests 0.2 s apart, one second for the last answer): what
# the rail's address sends on its own interface reaches its leaf.

rails_rtnames() {
	cat /etc/iproute2/rt_tables /etc/iproute2/rt_tables.d/*.conf \
		/usr/share/iproute2/rt_tables /usr/share/iproute2/rt_tables.d/*.conf 2>/dev/null
	return 0
}

rails_sysctl() {
	for p in $rp_proc; do
		v=; read -r v 2>/dev/null <"/proc/sys/$p"
		echo "$p ${v:--}"
	done
}

probe_rails() {
	fr rlinks ip -o link show
	fr raddrs ip -4 -o addr show
	fr rrules ip -4 rule show
	fr rtnames rails_rtnames
	for t in $rp_tables; do
		fr "rt:$t" ip -4 route show table "$t"
	done
	fr rsysctl rails_sysctl
}

ping_rails() {
	while read -r r i g <&3; do
		[ -n "$g" ] || continue
		fr "rp:$r" ping -n -c 2 -i 0.2 -W 1 -I "$i" "$g"
	done 3<<EOF
$rp_gw
EOF
}
probe_rails
topo_skel=/etc/rdggen/nccl-topology.xml
topo_out=/var/run/nvidia-topologyd/virtualTopology.xml
topo_head='<!-- NCCL topology file written by rdggen (pkg/nccltopo). The bus IDs are
     the guest'\''s own PCI addresses, as lspci shows them inside this VM, not
     the ESXi host'\''s. Each ffff:ff:NN.0 bridge exists in no PCI tree: it
     tells NCCL that the GPUs and NICs under it share one PCIe switch. -->
'
topo_gpus=4
topo_rails='0 ens224 -
1 rail1 -
'
# NCCL's topology file of a VM with several rails (pkg/railguest), written from
# the VM's skeleton (railguest.Skeleton) and this guest's own PCI devices, NUMA
# nodes and CPU, at every boot (rdggen-nccl-topology.service) and by hand. The
# hosts target reads the same facts (topo_facts) and writes the same bytes in
# Go (railguest.TopologyFile). It changes nothing but $topo_out.
#   topo_facts  prints the guest's facts, one per line (railguest.ParseFacts):
#                 machine <uname -m>
#                 cpu <vendor_id> <cpu family> <model>   (/proc/cpuinfo, "-" when absent)
#                 online <CPU list>                      (/sys/devices/system/cpu/online)
#                 node <id> <CPU list>                   (/sys/devices/system/node/node<id>/cpulist)
#                 pci <bus id> <vendor> <class> <NUMA node>  (/sys/bus/pci/devices/<bus id>)
#                 net <bus id> <interface> <MAC address>     (its net/<interface>/address)
#   topo_build  reads the facts on stdin and the skeleton $R$topo_skel, and
#               prints the file, $topo_head first in place of the skeleton's
#               own comment; or says on stderr why it cannot and returns 1:
#                 - GPU g is the g-th NVIDIA GPU (vendor 0x10de, class 0x03xxxx)
#                   in guest bus order: the skeleton's fffe:GG:00.0 (GG = g in
#                   hex) becomes its bus ID and class;
#                 - rail r's VF is the PCI device whose network interface has
#                   the rail's MAC address, or else its name: fffd:RR:00.0;
#                 - one <cpu> per guest NUMA node (id, the affinity mask of its
#                   cpulist, arch, vendor, family, model), each group under the
#                   node of its first GPU, when the guest has several nodes
#                   and every GPU reports one; else one <cpu> with every CPU;
#                 - the bridges numbered ffff:ff:01.0 on, in file order.
#   topo_write  topo_build of topo_facts into $R$topo_out: a temporary file in
#               the same directory renamed over it (a container that mounts
#               the directory sees the new file), left alone when the bytes are
#               the same. Nothing is written when topo_build refuses.
# Set by Go before it:
#   topo_skel   the skeleton's path, /etc/rdggen/nccl-topology.xml
#   topo_out    the file's path, NCCL's default
#               /var/run/nvidia-topologyd/virtualTopology.xml
#   topo_head   the file's header comment (nccltopo.Header), lines ending in LF
#   topo_gpus   how many GPUs the VM has
#   topo_rails  one line per rail, "<rail> <interface> <MAC address>" (MAC "-"
#               when the rail is found by its interface's name)

topo_facts() {
	echo "machine $(uname -m)"
	if [ -r "$R/proc/cpuinfo" ]; then
		awk '
			/^[ \t]*$/ { if (seen) exit; next }
			{
				seen = 1; i = index($0, ":"); if (!i) next
				k = substr($0, 1, i - 1); v = substr($0, i + 1)
				sub(/[ \t]+$/, "", k); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); gsub(/[ \t]+/, "_", v)
				if (k == "vendor_id") vendor = v; else if (k == "cpu family") family = v; else if (k == "model") model = v
			}
			END { print "cpu", w(vendor), w(family), w(model) }
			function w(s) { return s == "" ? "-" : s }' "$R/proc/cpuinfo"
	else
		echo "cpu - - -"
	fi
	l=; read -r l 2>/dev/null <"$R/sys/devices/system/cpu/online"
	echo "online $l"
	for d in "$R"/sys/devices/system/node/node[0-9]*; do
		[ -d "$d" ] || continue
		l=; read -r l 2>/dev/null <"$d/cpulist"
		echo "node ${d##*/node} $l"
	done
	for d in "$R"/sys/bus/pci/devices/*; do
		[ -r "$d/class" ] || continue
		v=; c=; n=
		read -r v 2>/dev/null <"$d/vendor"
		read -r c 2>/dev/null <"$d/class"
		read -r n 2>/dev/null <"$d/numa_node"
		echo "pci ${d##*/} ${v:--} ${c:--} ${n:--1}"
		for i in "$d"/net/*; do
			[ -r "$i/address" ] || continue
			m=; read -r m 2>/dev/null <"$i/address"
			echo "net ${d##*/} ${i##*/} ${m:--}"
		done
	done
}

topo_build() {
	[ -r "$R$topo_skel" ] || { echo "rdggen-nccl-topology: no skeleton $topo_skel: the VM's first boot or rdggen apply --target hosts installs it" >&2; return 1; }
	{
		echo "gpus $topo_gpus"
		printf '%s\n' "$topo_rails" | awk 'NF == 3 { print "rail", $0 }'
		cat
	} | topo_head=$topo_head awk -v skel="$topo_skel" '
	function fail(msg) { if (!bad) print "rdggen-nccl-topology: " msg | "cat 1>&2"; bad = 1; exit 1 }
	function hexval(s,   n, i) {
		n = 0
		for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n
	}
	function key(b) { return hexval(substr(b, 1, 4) substr(b, 6, 2) substr(b, 9, 2) substr(b, 12, 1)) }
	function busid(b) { return b ~ /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[01][0-9a-f]\.[0-7]$/ }
	# cpulist adds the CPUs of list s to set number set; 0 when s is not a
	# CPU list within 0-1023 or names a CPU of another set.
	function cpulist(s, set,   n, i, p, lo, hi, c) {
		if (s !~ /^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$/) return 0
		n = split(s, p, ",")
		for (i = 1; i <= n; i++) {
			lo = p[i]; hi = p[i]
			if (index(p[i], "-")) { lo = substr(p[i], 1, index(p[i], "-") - 1); hi = substr(p[i], index(p[i], "-") + 1) }
			lo += 0; hi += 0
			if (hi < lo || hi > 1023) return 0
			for (c = lo; c <= hi; c++) {
				if ((c in owner) && owner[c] != set) return 0
				owner[c] = set; cset[set, c] = 1; if (c > maxcpu) maxcpu = c
			}
		}
		return 1
	}
	function mask(set,   g, c, d, b, s, h) {
		s = ""
		for (g = groups - 1; g >= 0; g--) {
			h = ""
			for (d = 7; d >= 0; d--) {
				b = 0
				for (c = 3; c >= 0; c--) b = b * 2 + (((set, g * 32 + d * 4 + c) in cset) ? 1 : 0)
				h = h substr("0123456789abcdef", b + 1, 1)
			}
			s = s (s == "" ? "" : ",") h
		}
		return s
	}
	NR == FNR {
		if ($1 == "gpus") want = $2 + 0
		else if ($1 == "rail") { rname[$2] = $3; rmac[$2] = tolower($4) }
		else if ($1 == "machine") machine = $2
		else if ($1 == "cpu") { vendor = $2; family = $3; model = $4 }
		else if ($1 == "online") online = $2
		else if ($1 == "node" && $3 != "") { nodes[++nn] = $2; nlist[$2] = $3 }
		else if ($1 == "pci" && busid($2)) {
			pvendor[$2] = $3; pclass[$2] = $4; pnuma[$2] = $5
			if ($3 == "0x10de" && $4 ~ /^0x03[0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/) gbus[++ng] = $2
		} else if ($1 == "net") { nets++; nbus[nets] = $2; nif[nets] = $3; nmac[nets] = tolower($4) }
		next
	}
	{ sk[++nsk] = $0 }
	END {
		if (bad) exit 1
		if (nsk == 0) fail("the skeleton " skel " is empty")
		# GPUs in guest bus order
		for (i = 2; i <= ng; i++) for (j = i; j > 1 && key(gbus[j]) < key(gbus[j - 1]); j--) { t = gbus[j]; gbus[j] = gbus[j - 1]; gbus[j - 1] = t }
		if (ng != want) fail("this guest shows " ng " NVIDIA GPUs (vendor 0x10de, class 0x03xxxx), the VM has " want ": no file")
		# the CPU
		if (machine == "x86_64") arch = "x86_64"
		else if (machine == "aarch64" || machine == "arm64") arch = "arm64"
		else if (machine == "ppc64le" || machine == "ppc64") arch = "ppc64"
		else fail("machine " machine " is not x86_64, aarch64 or ppc64le, the architectures NCCL knows")
		cpuattr = " arch=\"" arch "\""
		if (arch == "x86_64") {
			if (vendor != "GenuineIntel" && vendor != "AuthenticAMD" && vendor != "CentaurHauls") fail("CPU vendor " vendor " (/proc/cpuinfo vendor_id) is not GenuineIntel, AuthenticAMD or CentaurHauls, the vendors NCCL knows")
			cpuattr = cpuattr " vendor=\"" vendor "\""
			if (family ~ /^[0-9]+$/ && model ~ /^[0-9]+$/ && family + 0 > 0) cpuattr = cpuattr " familyid=\"" family + 0 "\" modelid=\"" model + 0 "\""
			else if (vendor != "AuthenticAMD") fail(vendor " CPUs need their family and model (/proc/cpuinfo cpu family, model), which NCCL reads: found " family " and " model)
		}
		# the NUMA nodes, ascending
		for (i = 2; i <= nn; i++) for (j = i; j > 1 && nodes[j] + 0 < nodes[j - 1] + 0; j--) { t = nodes[j]; nodes[j] = nodes[j - 1]; nodes[j - 1] = t }
		split("", known)
		for (i = 1; i <= nn; i++) known[nodes[i]] = 1
		multi = nn >= 2
		for (g = 0; g < ng && multi; g++) if (!(pnuma[gbus[g + 1]] in known)) multi = 0
		maxcpu = -1
		if (multi) {
			for (i = 1; i <= nn; i++) {
				ids[i] = nodes[i]
				if (!cpulist(nlist[nodes[i]], i)) fail("NUMA node " nodes[i] ": cpulist " nlist[nodes[i]] " is not a list of CPUs 0-1023 apart from the other nodes")
			}
			ncpu = nn
		} else {
			ids[1] = nn == 1 ? nodes[1] : 0; ncpu = 1
			if (nn == 0 && !cpulist(online, 1)) fail("no NUMA node, and /sys/devices/system/cpu/online (" online ") is not a list of CPUs 0-1023")
			for (i = 1; i <= nn; i++) if (!cpulist(nlist[nodes[i]], 1)) fail("NUMA node " nodes[i] ": cpulist " nlist[nodes[i]] " is not a list of CPUs 0-1023")
		}
		groups = int(maxcpu / 32) + 1
		# the skeleton: header, <system>, then each group with this guest bus IDs
		for (i = 1; i <= nsk && head == ""; i++) if (sk[i] ~ /-->$/) head = i
		for (i = 1; i <= nsk && sys == ""; i++) if (sk[i] ~ /^<system /) sys = i
		if (head == "" || sys == "") fail("the skeleton " skel " has no header or <system> line")
		ngr = 0
		for (i = sys + 1; i <= nsk; i++) {
			l = sk[i]
			if (l ~ /^    <pci busid="ffff:ff:[0-9a-f][0-9a-f]\.0" /) { ngr++; gline[ngr] = l; gn[ngr] = 0; gnode[ngr] = ""; continue }
			if (l ~ /^    <\/pci>$/) continue
			if (l !~ /^      <pci busid="/) continue
			if (!ngr) fail("skeleton line " i ": a device outside a bridge")
			p = substr(l, 19, 12); rest = substr(l, index(l, "\" link_speed=\""))
			if (p ~ /^fffe:[0-9a-f][0-9a-f]:00\.0$/) {
				g = hexval(substr(p, 6, 2))
				if (g >= ng) fail("skeleton line " i ": GPU " g ", but the guest shows " ng)
				b = gbus[g + 1]
				if (gnode[ngr] == "") gnode[ngr] = multi ? pnuma[b] : ids[1]
			} else if (p ~ /^fffd:[0-9a-f][0-9a-f]:00\.0$/) {
				r = hexval(substr(p, 6, 2))
				if (!(r in rname)) fail("skeleton line " i ": rail " r " is not in topo_rails")
				b = ""
				for (k = 1; k <= nets; k++) if ((rmac[r] != "-" && nmac[k] == rmac[r]) || (rmac[r] == "-" && nif[k] == rname[r])) { b = nbus[k]; break }
				if (b == "") fail("rail " r ": no network interface " (rmac[r] == "-" ? "is named " rname[r] : "has the MAC address " rmac[r] " (" rname[r] ")") " on a PCI device")
				if (pclass[b] !~ /^0x020[07][0-9a-f][0-9a-f]$/) fail("rail " r ": " b " (" rname[r] ") has class " pclass[b] ", not an Ethernet or InfiniBand NIC")
				if (substr(b, 9) != "00.0") fail("rail " r ": " b " (" rname[r] ") is not device and function 00.0: NCCL files an RDMA device under " substr(b, 1, 8) "00.0 and would never match it")
			} else fail("skeleton line " i ": " p " is not a placeholder fffe:GG:00.0 (a GPU) or fffd:RR:00.0 (a rail)")
			if (pclass[b] !~ /^0x[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/) fail(b ": class " pclass[b] " is not 0x and 6 hex digits")
			if (b in used) fail(b " is both " used[b] " and " p)
			used[b] = p
			gdev[ngr, ++gn[ngr]] = "      <pci busid=\"" b "\" class=\"" pclass[b] rest
		}
		if (!ngr) fail("the skeleton " skel " has no group")
		printf "%s", ENVIRON["topo_head"]
		print sk[sys]
		bridge = 0
		for (c = 1; c <= ncpu; c++) {
			print "  <cpu numaid=\"" ids[c] "\" affinity=\"" mask(c) "\"" cpuattr ">"
			for (k = 1; k <= ngr; k++) {
				if (gnode[k] "" != ids[c] "") continue
				l = gline[k]; bridge++
				print substr(l, 1, 16) sprintf("ffff:ff:%02x.0", bridge) substr(l, 29)
				for (d = 1; d <= gn[k]; d++) print gdev[k, d]
				print "    </pci>"
			}
			print "  </cpu>"
		}
		print "</system>"
	}' - "$R$topo_skel"
}

topo_write() {
	o=$R$topo_out
	t=${o%/*}/.${o##*/}.rdggen-$$
	mkdir -p "${o%/*}" || { echo "rdggen-nccl-topology: cannot create ${topo_out%/*}" >&2; return 1; }
	if ! topo_facts | topo_build >"$t"; then
		rm -f "$t"
		echo "rdggen-nccl-topology: $topo_out not written" >&2
		return 1
	fi
	if cmp -s "$t" "$o"; then
		rm -f "$t"
		echo "rdggen-nccl-topology: $topo_out is up to date"
		return 0
	fi
	if ! { chmod 644 "$t" && mv -f "$t" "$o"; }; then
		rm -f "$t"
		echo "rdggen-nccl-topology: cannot write $topo_out" >&2
		return 1
	fi
	echo "rdggen-nccl-topology: wrote $topo_out"
}
fr topology-facts topo_facts
fr topology-file cat "$R"/var/run/nvidia-topologyd/virtualTopology.xml
printf '@rdggen %s done\n' "$N"
