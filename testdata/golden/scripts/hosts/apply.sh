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
# A private temp directory $T, removed on exit, and the file helpers; the
# scripts that change files add it after the prelude, probes do not.
T=$(mktemp -d) || { echo "rdggen: mktemp failed" >&2; exit 97; }
trap 'rm -rf "$T"' EXIT
# put_file PATH MODE SRC: install SRC as PATH atomically (temp file beside it, then rename).
put_file() {
	d=${1%/*}; mkdir -p "$d" || return 1
	t="$d/.${1##*/}.rdggen-tmp"
	{ cp "$3" "$t" && chmod "$2" "$t"; } || { rm -f "$t"; return 1; }
	sync "$t" 2>/dev/null
	mv -f "$t" "$1"
}
# put_link PATH TARGET: make PATH a symbolic link to TARGET.
put_link() { mkdir -p "${1%/*}" && ln -sfn "$2" "$1"; }
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
base64 -d >"$T/d1" <<'RDGGEN_0123456789abcdef'
IyByZGdnZW46IElQIGZvcndhcmRpbmcgZm9yIGNseC1tbGQtNDEncyByb3V0ZWQgZG9ja2VyMCBz
dWJuZXQgMTcyLjE2LjQxLjAvMjQgKGNsdXN0ZXIgY2x4LW1sZCkuCiMgSW5zdGFsbGVkIGFzIC9l
dGMvc3lzY3RsLmQvNjAtcmRnZ2VuLWZvcndhcmRpbmcuY29uZjsgc3lzdGVtZC1zeXNjdGwgYXBw
bGllcyBpdCBhdCBib290LCBiZWZvcmUgZG9ja2VyLnNlcnZpY2UsCiMgc28gZG9ja2VyZCBmaW5k
cyBmb3J3YXJkaW5nIG9uIGFuZCBsZWF2ZXMgdGhlIEZPUldBUkQgcG9saWN5IGFsb25lLiBOb3c6
IHN5c2N0bCAtcCA8dGhpcyBmaWxlPi4KbmV0LmlwdjQuY29uZi5hbGwuZm9yd2FyZGluZyA9IDEK
RDGGEN_0123456789abcdef
step file:/etc/sysctl.d/60-rdggen-forwarding.conf put_file "$R"/etc/sysctl.d/60-rdggen-forwarding.conf 644 "$T/d1"
base64 -d >"$T/d2" <<'RDGGEN_0123456789abcdef'
IyEvYmluL3NoCiMgcmRnZ2VuOiBwZXJzaXN0ZW50IHJvdXRlcyBvZiBjbHgtbWxkLTQxICh1YnVu
dHUtMTYuMDQsIGlmdXBkb3duKSwgY2x1c3RlciBjbHgtbWxkLgojIEluc3RhbGxlZCBhcyAvZXRj
L25ldHdvcmsvaWYtdXAuZC9yZGdnZW4tcm91dGVzIChtb2RlIDA3NTUpOiBpZnVwIHJ1bnMgZXZl
cnkgaWYtdXAuZCBzY3JpcHQgYWZ0ZXIgYW4KIyBpbnRlcmZhY2UgY29tZXMgdXAgKE5ldHdvcmtN
YW5hZ2VyJ3MgZGlzcGF0Y2hlciBydW5zIHRoZW0gdG9vKTsgdGhpcyBvbmUgYWN0cyBmb3IgZW5w
MWYwIG9ubHkuCiMgSXQgc2V0cyB0aGUgZGF0YSBuZXR3b3JrJ3MgTVRVICgxNTAwKSBhbmQgYWRk
cyB0aGUgcm91dGVzLgojIEEgaG9vayBpbnN0ZWFkIG9mICJ1cCIgbGluZXMgaW4gZW5wMWYwJ3Mg
c3RhbnphIG9mIC9ldGMvbmV0d29yay9pbnRlcmZhY2VzOiBpdCBsZWF2ZXMKIyB0aGF0IHN0YW56
YSAoYW5kIHRoZSBmaWxlIGl0IGlzIGluKSBhcyB0aGUgb3BlcmF0b3Igd3JvdGUgaXQgYW5kIG5l
dmVyIGFkZHMgYSBzZWNvbmQgb25lLgpbICIkSUZBQ0UiID0gZW5wMWYwIF0gfHwgZXhpdCAwCmlw
IGxpbmsgc2V0IGRldiBlbnAxZjAgbXR1IDE1MDAgfHwgZWNobyAicmRnZ2VuLXJvdXRlczogY2Fu
bm90IHNldCB0aGUgZGF0YSBNVFUgMTUwMCBvbiBlbnAxZjAiID4mMgppcCAtZm9yY2UgLWJhdGNo
IC0gPDwnRU9GJyB8fCBlY2hvICJyZGdnZW4tcm91dGVzOiBzb21lIHJvdXRlcyB2aWEgZW5wMWYw
IGZhaWxlZCIgPiYyCnJvdXRlIHJlcGxhY2UgMTcyLjE2LjQyLjAvMjQgdmlhIDMxLjMxLjMxLjQy
IGRldiBlbnAxZjAKcm91dGUgcmVwbGFjZSAxNzIuMTYuNDMuMC8yNCB2aWEgMzEuMzEuMzEuNDMg
ZGV2IGVucDFmMApyb3V0ZSByZXBsYWNlIDE3Mi4xNi40NC4wLzI0IHZpYSAzMS4zMS4zMS40NCBk
ZXYgZW5wMWYwCnJvdXRlIHJlcGxhY2UgMTcyLjE2LjQ1LjAvMjQgdmlhIDMxLjMxLjMxLjQ1IGRl
diBlbnAxZjAKcm91dGUgcmVwbGFjZSAxNzIuMTYuNDYuMC8yNCB2aWEgMzEuMzEuMzEuNDYgZGV2
IGVucDFmMApyb3V0ZSByZXBsYWNlIDE3Mi4xNi40Ny4wLzI0IHZpYSAzMS4zMS4zMS40NyBkZXYg
ZW5wMWYwCnJvdXRlIHJlcGxhY2UgMTcyLjE2LjQ4LjAvMjQgdmlhIDMxLjMxLjMxLjQ4IGRldiBl
bnAxZjAKRU9GCmV4aXQgMAo=
RDGGEN_0123456789abcdef
step file:/etc/network/if-up.d/rdggen-routes put_file "$R"/etc/network/if-up.d/rdggen-routes 755 "$T/d2"
base64 -d >"$T/d3" <<'RDGGEN_0123456789abcdef'
IyEvYmluL3NoCiMgcmRnZ2VuOiBmaXJld2FsbCBhbmQgYWRkcmVzcyB0cmFuc2xhdGlvbiBvZiBj
bHgtbWxkLTQxJ3MgY29udGFpbmVycyAoY2x1c3RlciBjbHgtbWxkKS4KIyBJbnN0YWxsZWQgYXMg
L2V0Yy9yZGdnZW4vZmlyZXdhbGwuc2g7IHJkZ2dlbi1maXJld2FsbC5zZXJ2aWNlIHJ1bnMgaXQg
YWZ0ZXIgZXZlcnkgc3RhcnQgb2YKIyBkb2NrZXIuc2VydmljZSwgYmVjYXVzZSBkb2NrZXJkIHB1
dHMgaXRzIE1BU1FVRVJBREUgcnVsZSBiYWNrIG9uIHRvcCBvZiBQT1NUUk9VVElORyB3aGVuIGl0
IHN0YXJ0cy4KIyBSREdHRU4tQ09OVEFJTkVSUyAoZmlsdGVyLCBmaXJzdCBydWxlIG9mIERPQ0tF
Ui1VU0VSKTogb3ZlciBlbnAxZjAsIG5ldyBjb25uZWN0aW9ucyB0byB0aGlzCiMgaG9zdCdzIGNv
bnRhaW5lcnMgKDE3Mi4xNi40MS4wLzI0KSBhcmUgYWNjZXB0ZWQgZnJvbSB0aGUgb3RoZXIgaG9z
dHMnIGNvbnRhaW5lcnMgYW5kIGRyb3BwZWQgZnJvbQojIGFueXdoZXJlIGVsc2UsIHdoYXRldmVy
IHRoZSBGT1JXQVJEIHBvbGljeSAoZG9ja2VyZCBsZWF2ZXMgaXQgYXQgQUNDRVBUIHdoZXJlIGZv
cndhcmRpbmcgd2FzCiMgYWxyZWFkeSBvbiB3aGVuIGl0IHN0YXJ0ZWQpLgojIFJER0dFTi1QT1NU
Uk9VVElORyAobmF0LCBmaXJzdCBydWxlIG9mIFBPU1RST1VUSU5HKTogdHJhZmZpYyBmcm9tIDE3
Mi4xNi40MS4wLzI0IHRvIHRoZSBvdGhlciBob3N0cycKIyBjb250YWluZXJzIGtlZXBzIGl0cyBj
b250YWluZXIgc291cmNlIGFkZHJlc3MgKE9wZW4gTVBJJ3MgVENQIHRyYW5zcG9ydCBkcm9wcyBj
b25uZWN0aW9ucyBmcm9tCiMgYW4gYWRkcmVzcyB0aGUgcGVlciBkaWQgbm90IHB1Ymxpc2gpOyBE
b2NrZXIncyBNQVNRVUVSQURFIHN0aWxsIGFwcGxpZXMgdG8gZXZlcnl0aGluZyBlbHNlLgpzZXQg
LWV1CiMgZmlyc3RfcnVsZSBUQUJMRSBDSEFJTiBUQVJHRVQ6IENIQUlOJ3MgZmlyc3QgcnVsZSBq
dW1wcyB0byBUQVJHRVQsIGFuZCBubyBvdGhlciBydWxlIGRvZXMuCmZpcnN0X3J1bGUoKSB7Cglp
cHRhYmxlcyAtdyAtdCAiJDEiIC1JICIkMiIgMSAtaiAiJDMiCglpcHRhYmxlcyAtdyAtdCAiJDEi
IC1TICIkMiIgfCBhd2sgLXYgcj0iLUEgJDIgLWogJDMiICdOUiA+IDIgJiYgJDAgPT0gciB7IHBy
aW50IE5SIC0gMSB9JyB8IHNvcnQgLXJuIHwKCXdoaWxlIHJlYWQgLXIgbjsgZG8gaXB0YWJsZXMg
LXcgLXQgIiQxIiAtRCAiJDIiICIkbiI7IGRvbmUKfQppcHRhYmxlcyAtdyAtbiAtTCBET0NLRVIt
VVNFUiA+L2Rldi9udWxsIDI+JjEgfHwgaXB0YWJsZXMgLXcgLU4gRE9DS0VSLVVTRVIKaXB0YWJs
ZXMtcmVzdG9yZSAtLW5vZmx1c2ggPDwnRU9GJwoqZmlsdGVyCjpSREdHRU4tQ09OVEFJTkVSUyAt
IFswOjBdCi1BIFJER0dFTi1DT05UQUlORVJTIC1zIDE3Mi4xNi40Mi4wLzIzIC1kIDE3Mi4xNi40
MS4wLzI0IC1pIGVucDFmMCAtbyBkb2NrZXIwIC1qIEFDQ0VQVAotQSBSREdHRU4tQ09OVEFJTkVS
UyAtcyAxNzIuMTYuNDQuMC8yMiAtZCAxNzIuMTYuNDEuMC8yNCAtaSBlbnAxZjAgLW8gZG9ja2Vy
MCAtaiBBQ0NFUFQKLUEgUkRHR0VOLUNPTlRBSU5FUlMgLXMgMTcyLjE2LjQ4LjAvMjQgLWQgMTcy
LjE2LjQxLjAvMjQgLWkgZW5wMWYwIC1vIGRvY2tlcjAgLWogQUNDRVBUCi1BIFJER0dFTi1DT05U
QUlORVJTIC1kIDE3Mi4xNi40MS4wLzI0IC1pIGVucDFmMCAtbyBkb2NrZXIwIC1tIGNvbm50cmFj
ayAhIC0tY3RzdGF0ZSBSRUxBVEVELEVTVEFCTElTSEVEIC1qIERST1AKQ09NTUlUCipuYXQKOlJE
R0dFTi1QT1NUUk9VVElORyAtIFswOjBdCi1BIFJER0dFTi1QT1NUUk9VVElORyAtcyAxNzIuMTYu
NDEuMC8yNCAtZCAxNzIuMTYuNDIuMC8yMyAtaiBBQ0NFUFQKLUEgUkRHR0VOLVBPU1RST1VUSU5H
IC1zIDE3Mi4xNi40MS4wLzI0IC1kIDE3Mi4xNi40NC4wLzIyIC1qIEFDQ0VQVAotQSBSREdHRU4t
UE9TVFJPVVRJTkcgLXMgMTcyLjE2LjQxLjAvMjQgLWQgMTcyLjE2LjQ4LjAvMjQgLWogQUNDRVBU
CkNPTU1JVApFT0YKZmlyc3RfcnVsZSBmaWx0ZXIgRE9DS0VSLVVTRVIgUkRHR0VOLUNPTlRBSU5F
UlMKZmlyc3RfcnVsZSBuYXQgUE9TVFJPVVRJTkcgUkRHR0VOLVBPU1RST1VUSU5HCg==
RDGGEN_0123456789abcdef
step file:/etc/rdggen/firewall.sh put_file "$R"/etc/rdggen/firewall.sh 755 "$T/d3"
base64 -d >"$T/d4" <<'RDGGEN_0123456789abcdef'
IyByZGdnZW46IGZpcmV3YWxsIGFuZCBhZGRyZXNzIHRyYW5zbGF0aW9uIG9mIGNseC1tbGQtNDEn
cyBjb250YWluZXJzIChjbHVzdGVyIGNseC1tbGQpLgojIEluc3RhbGxlZCBhcyAvZXRjL3N5c3Rl
bWQvc3lzdGVtL3JkZ2dlbi1maXJld2FsbC5zZXJ2aWNlLAojIGVuYWJsZWQgd2l0aCB0aGUgbGlu
ayAvZXRjL3N5c3RlbWQvc3lzdGVtL2RvY2tlci5zZXJ2aWNlLndhbnRzL3JkZ2dlbi1maXJld2Fs
bC5zZXJ2aWNlLgpbVW5pdF0KRGVzY3JpcHRpb249cmRnZ2VuOiB0aGUgY2x1c3RlcidzIGNvbnRh
aW5lciB0cmFmZmljLCB1bnRyYW5zbGF0ZWQgYW5kIGZpbHRlcmVkIChSREdHRU4tQ09OVEFJTkVS
UywgUkRHR0VOLVBPU1RST1VUSU5HKQpBZnRlcj1kb2NrZXIuc2VydmljZQpQYXJ0T2Y9ZG9ja2Vy
LnNlcnZpY2UKCltTZXJ2aWNlXQpUeXBlPW9uZXNob3QKUmVtYWluQWZ0ZXJFeGl0PXllcwpFeGVj
U3RhcnQ9L2Jpbi9zaCAvZXRjL3JkZ2dlbi9maXJld2FsbC5zaAoKW0luc3RhbGxdCldhbnRlZEJ5
PWRvY2tlci5zZXJ2aWNlCg==
RDGGEN_0123456789abcdef
step file:/etc/systemd/system/rdggen-firewall.service put_file "$R"/etc/systemd/system/rdggen-firewall.service 644 "$T/d4"
base64 -d >"$T/d5" <<'RDGGEN_0123456789abcdef'
IyEvYmluL3NoCiMgcmRnZ2VuOiBpbi1WTSBzaWRlIG9mIGxvc3NsZXNzIFJvQ0UgKERTQ1AtYmFz
ZWQgUW9TKSBvbiBjbHgtbWxkLTQxIChjbHVzdGVyIGNseC1tbGQpLgojIEluc3RhbGxlZCBhcyAv
dXNyL2xvY2FsL3NiaW4vcmRnZ2VuLXJvY2UtcW9zOyByZGdnZW4tcm9jZS1xb3Muc2VydmljZSBy
dW5zIGl0IGF0IGJvb3QuIFNhZmUgdG8gcnVuIGFnYWluLgojIFVzYWdlOiByZGdnZW4tcm9jZS1x
b3MgW2FwcGx5fGNoZWNrXSAgIGNoZWNrIGNoYW5nZXMgbm90aGluZyBhbmQgZXhpdHMgMSB3aGVu
IHNvbWV0aGluZyBkaWZmZXJzLgojCiMgU2V0IGhlcmUsIG9uIHRoZSBWTSdzIENvbm5lY3RYIFZG
IGVucDFmMCAoZWFjaCBwYXRoIHByb2JlZDsgIm4vYSIgd2hlbiBhYnNlbnQsIG5ldmVyIGEgZmFp
bHVyZSk6CiMgICB0Y3BfZWNuID0gMTogVENQIG5lZ290aWF0ZXMgRUNOIChkZWZhdWx0IDIgb25s
eSBhbnN3ZXJzKTsgVENQIG9ubHksIG5vdCBSb0NFCiMgICBjbWFfcm9jZV90b3MgPSAxMDY6IGRl
ZmF1bHQgVG9TIG9mIFJETUEtQ00gUVBzOiBEU0NQIDI2IDw8IDIgfCBFQ1QoMCkgKGNvbmZpZ2Zz
IHJkbWFfY20sIHdoYXQgY21hX3JvY2VfdG9zIHdyaXRlcykKIyAgIHRyYWZmaWNfY2xhc3MgPSAx
MDY6IFRvUyBvZiB2ZXJicyBRUHMgdGhhdCBkbyBub3QgdXNlIFJETUEtQ00gKE1MTlhfT0ZFRCBz
eXNmczsgTkNDTCBhbHNvIGdldHMgTkNDTF9JQl9UQykKIyAgIGVjbl9ucCA9IDE6IEVDTiBub3Rp
ZmljYXRpb24gcG9pbnQgb24gcHJpb3JpdHkgMyAoYW5zd2VycyBDRSBtYXJrcyB3aXRoIENOUHMp
OyBQRiBvbmx5CiMgICBlY25fcnAgPSAxOiBFQ04gcmVhY3Rpb24gcG9pbnQgb24gcHJpb3JpdHkg
MyAoRENRQ04gcmF0ZSBsaW1pdGluZyBvbiBDTlBzKTsgUEYgb25seQojIE5vdCBhcHBsaWNhYmxl
IG9uIGEgVkY6IHRydXN0IERTQ1AsIFBGQyBvbiBwcmlvcml0eSAzLCBFQ04gb24gcHJpb3JpdHkg
MyB3aXRoIENOUHMgYXQgRFNDUCA0OC9wcmlvcml0eSA2IGFyZSBwb3J0IHNldHRpbmdzIG9mIHRo
ZSBQRiwgc2V0IGJ5IEVTWGkgaW4gZXN4aS9lc3gtNDEuZXhhbXBsZS5zaC4KIyBOQ0NMIGRvZXMg
bm90IHVzZSBSRE1BLUNNOyBob3Jvdm9kL3J1bi5zaCBwYXNzZXMgTkNDTF9JQl9UQz0xMDYuCnNl
dCAtdQptb2RlPSR7MTotYXBwbHl9CmNhc2UgJG1vZGUgaW4gYXBwbHl8Y2hlY2spIDs7ICopIGVj
aG8gInVzYWdlOiAkMCBbYXBwbHl8Y2hlY2tdIiA+JjI7IGV4aXQgMjs7IGVzYWMKc3lzPSR7UkRH
R0VOX1NZU0ZTOi0vc3lzfQpwcm9jPSR7UkRHR0VOX1BST0NGUzotL3Byb2N9CmlmYWNlPWVucDFm
MApyYz0wCnJlcG9ydCgpIHsgZWNobyAicmRnZ2VuLXJvY2UgJCoiOyB9CiMgcHV0IE5BTUUgRklM
RSBWQUxVRTogd3JpdGUgVkFMVUUgdW5sZXNzIEZJTEUgYWxyZWFkeSBob2xkcyBpdC4KcHV0KCkg
ewoJY3VyPSQoY2F0ICIkMiIgMj4vZGV2L251bGwpIHx8IHsgcmVwb3J0ICIkMSBmYWlsZWQgY2Fu
bm90IHJlYWQgJDIiOyByYz0xOyByZXR1cm47IH0KCWN1cj0ke2N1ciMjKj19ICAjIE1MTlhfT0ZF
RCBwcmludHMgdHJhZmZpY19jbGFzcyBhcyAiR2xvYmFsIHRjbGFzcz0xMDYiCglpZiBbICIkY3Vy
IiA9ICIkMyIgXTsgdGhlbiByZXBvcnQgIiQxIG9rICQzIjsgcmV0dXJuOyBmaQoJaWYgWyAiJG1v
ZGUiID0gY2hlY2sgXTsgdGhlbiByZXBvcnQgIiQxIGRpZmZlcnMgJGN1ciAtPiAkMyI7IHJjPTE7
IHJldHVybjsgZmkKCWlmIGVjaG8gIiQzIiAyPi9kZXYvbnVsbCA+IiQyIjsgdGhlbiByZXBvcnQg
IiQxIHNldCAkY3VyIC0+ICQzIjsgZWxzZSByZXBvcnQgIiQxIGZhaWxlZCBjYW5ub3Qgd3JpdGUg
JDIiOyByYz0xOyBmaQp9CgpwdXQgdGNwX2VjbiAiJHByb2Mvc3lzL25ldC9pcHY0L3RjcF9lY24i
IDEKCiMgVGhlIFJETUEgZGV2aWNlIGJlaGluZCB0aGUgZGF0YSBpbnRlcmZhY2UgKG1seDVfTiBv
ZiB0aGUgVkYpLgpkZXY9CmZvciBkIGluICIkc3lzL2NsYXNzL25ldC8kaWZhY2UvZGV2aWNlL2lu
ZmluaWJhbmQvIio7IGRvIFsgLWQgIiRkIiBdICYmIGRldj0ke2QjIyovfSAmJiBicmVhazsgZG9u
ZQppZiBbIC16ICIkZGV2IiBdOyB0aGVuCglyZXBvcnQgInJkbWFfZGV2aWNlIG4vYSBubyBSRE1B
IGRldmljZSBiZWhpbmQgJGlmYWNlIChtbHg1X2liIG5vdCBsb2FkZWQsIG9yIG5vdCBhIENvbm5l
Y3RYIGZ1bmN0aW9uKSIKCXJlcG9ydCAiY21hX3JvY2VfdG9zIG4vYSBuZWVkcyB0aGUgUkRNQSBk
ZXZpY2UiCglyZXBvcnQgInRyYWZmaWNfY2xhc3Mgbi9hIG5lZWRzIHRoZSBSRE1BIGRldmljZSIK
ZWxzZQoJcmVwb3J0ICJyZG1hX2RldmljZSBvayAkZGV2IgoJY2ZnPSRzeXMva2VybmVsL2NvbmZp
Zy9yZG1hX2NtCglpZiBbICEgLWQgIiRjZmciIF07IHRoZW4KCQlyZXBvcnQgImNtYV9yb2NlX3Rv
cyBuL2EgJGNmZyBhYnNlbnQgKGNvbmZpZ2ZzIG5vdCBtb3VudGVkIG9yIHJkbWFfY20gbm90IGxv
YWRlZCkiCgllbGlmIFsgISAtZCAiJGNmZy8kZGV2IiBdICYmIFsgIiRtb2RlIiA9IGNoZWNrIF07
IHRoZW4KCQlyZXBvcnQgImNtYV9yb2NlX3RvcyBkaWZmZXJzIHVuc2V0IC0+IDEwNiI7IHJjPTEK
CWVsc2UKCQkjIG1rZGlyIGluIGNvbmZpZ2ZzIGNyZWF0ZXMgdGhlIGRldmljZSdzIHJkbWFfY20g
Z3JvdXAgYW5kIGl0cyBwb3J0cy8gdHJlZS4KCQlbIC1kICIkY2ZnLyRkZXYiIF0gfHwgbWtkaXIg
IiRjZmcvJGRldiIgMj4vZGV2L251bGwKCQlwdXQgY21hX3JvY2VfdG9zICIkc3lzL2tlcm5lbC9j
b25maWcvcmRtYV9jbS8kZGV2L3BvcnRzLzEvZGVmYXVsdF9yb2NlX3RvcyIgMTA2CglmaQoJdGM9
IiRzeXMvY2xhc3MvaW5maW5pYmFuZC8kZGV2L3RjLzEvdHJhZmZpY19jbGFzcyIKCWlmIFsgLWUg
IiR0YyIgXTsgdGhlbgoJCXB1dCB0cmFmZmljX2NsYXNzICIkdGMiIDEwNgoJZWxzZQoJCXJlcG9y
dCAidHJhZmZpY19jbGFzcyBuL2EgJHRjIGFic2VudCAodXBzdHJlYW0gbWx4NSBoYXMgbm8gdGMv
IGRpcmVjdG9yeTsgTkNDTF9JQl9UQyBjb3ZlcnMgTkNDTCkiCglmaQpmaQoKIyBFQ04gcGVyIHBy
aW9yaXR5OiBvbmx5IGEgZnVuY3Rpb24gdGhhdCBleHBvc2VzIGVjbi8gKGEgUEYpIHRha2VzIGl0
LgppZiBbIC1lICIkc3lzL2NsYXNzL25ldC9lbnAxZjAvZWNuL3JvY2VfbnAvZW5hYmxlLzMiIF07
IHRoZW4gcHV0IGVjbl9ucCAiJHN5cy9jbGFzcy9uZXQvZW5wMWYwL2Vjbi9yb2NlX25wL2VuYWJs
ZS8zIiAxOyBlbHNlIHJlcG9ydCAiZWNuX25wIG4vYSBub3QgYXBwbGljYWJsZSBvbiBhIFZGIChu
byAkaWZhY2UvZWNuIGluIHN5c2ZzKTogc2V0IG9uIHRoZSBQRiBieSBFU1hpIjsgZmkKaWYgWyAt
ZSAiJHN5cy9jbGFzcy9uZXQvZW5wMWYwL2Vjbi9yb2NlX3JwL2VuYWJsZS8zIiBdOyB0aGVuIHB1
dCBlY25fcnAgIiRzeXMvY2xhc3MvbmV0L2VucDFmMC9lY24vcm9jZV9ycC9lbmFibGUvMyIgMTsg
ZWxzZSByZXBvcnQgImVjbl9ycCBuL2Egbm90IGFwcGxpY2FibGUgb24gYSBWRiAobm8gJGlmYWNl
L2VjbiBpbiBzeXNmcyk6IHNldCBvbiB0aGUgUEYgYnkgRVNYaSI7IGZpCnJlcG9ydCAicGZfcW9z
IGVzeGkgbm90IGFwcGxpY2FibGUgb24gYSBWRjogdHJ1c3QgRFNDUCwgUEZDIG9uIHByaW9yaXR5
IDMsIEVDTiBvbiBwcmlvcml0eSAzIHdpdGggQ05QcyBhdCBEU0NQIDQ4L3ByaW9yaXR5IDYgYXJl
IHBvcnQgc2V0dGluZ3Mgb2YgdGhlIFBGLCBzZXQgYnkgRVNYaSBpbiBlc3hpL2VzeC00MS5leGFt
cGxlLnNoIgpleGl0ICRyYwo=
RDGGEN_0123456789abcdef
step file:/usr/local/sbin/rdggen-roce-qos put_file "$R"/usr/local/sbin/rdggen-roce-qos 755 "$T/d5"
base64 -d >"$T/d6" <<'RDGGEN_0123456789abcdef'
IyByZGdnZW46IGluLVZNIGxvc3NsZXNzIFJvQ0Ugc2V0dGluZ3Mgb2YgY2x4LW1sZC00MSAoY2x1
c3RlciBjbHgtbWxkKS4KIyBJbnN0YWxsZWQgYXMgL2V0Yy9zeXN0ZW1kL3N5c3RlbS9yZGdnZW4t
cm9jZS1xb3Muc2VydmljZSwKIyBlbmFibGVkIHdpdGggdGhlIGxpbmsgL2V0Yy9zeXN0ZW1kL3N5
c3RlbS9tdWx0aS11c2VyLnRhcmdldC53YW50cy9yZGdnZW4tcm9jZS1xb3Muc2VydmljZS4KW1Vu
aXRdCkRlc2NyaXB0aW9uPXJkZ2dlbjogUm9DRSBUb1MgMTA2IGFuZCBUQ1AgRUNOIG9uIGVucDFm
MApXYW50cz1uZXR3b3JrLW9ubGluZS50YXJnZXQKQWZ0ZXI9bmV0d29yay1vbmxpbmUudGFyZ2V0
IG9wZW5pYmQuc2VydmljZQoKW1NlcnZpY2VdClR5cGU9b25lc2hvdApSZW1haW5BZnRlckV4aXQ9
eWVzCkV4ZWNTdGFydD0vdXNyL2xvY2FsL3NiaW4vcmRnZ2VuLXJvY2UtcW9zIGFwcGx5CgpbSW5z
dGFsbF0KV2FudGVkQnk9bXVsdGktdXNlci50YXJnZXQK
RDGGEN_0123456789abcdef
step file:/etc/systemd/system/rdggen-roce-qos.service put_file "$R"/etc/systemd/system/rdggen-roce-qos.service 644 "$T/d6"
base64 -d >"$T/d7" <<'RDGGEN_0123456789abcdef'
IyByZGdnZW46IEdQVURpcmVjdCBSRE1BIG9uIGNseC1tbGQtNDEgKGNsdXN0ZXIgY2x4LW1sZCk6
IGxvYWQgTlZJRElBJ3MgcGVlci1tZW1vcnkgbW9kdWxlIGF0IGJvb3QsCiMgc28gdGhlIFZGIHJl
YWRzIGFuZCB3cml0ZXMgR1BVIG1lbW9yeSBkaXJlY3RseSAoTlZJRElBIGRyaXZlciA+PSA0NzAs
IGluc3RhbGxlZCBhZnRlciBNTE5YX09GRUQpLgpudmlkaWEtcGVlcm1lbQo=
RDGGEN_0123456789abcdef
step file:/etc/modules-load.d/60-rdggen-nvidia-peermem.conf put_file "$R"/etc/modules-load.d/60-rdggen-nvidia-peermem.conf 644 "$T/d7"
step link:/etc/systemd/system/docker.service.wants/rdggen-firewall.service put_link "$R"/etc/systemd/system/docker.service.wants/rdggen-firewall.service /etc/systemd/system/rdggen-firewall.service
step link:/etc/systemd/system/multi-user.target.wants/rdggen-roce-qos.service put_link "$R"/etc/systemd/system/multi-user.target.wants/rdggen-roce-qos.service /etc/systemd/system/rdggen-roce-qos.service
step remove:/etc/netplan/60-rdggen.yaml rm -f "$R"/etc/netplan/60-rdggen.yaml
step remove:/etc/rdggen/firewall.rules rm -f "$R"/etc/rdggen/firewall.rules
# systemd_reload (internal/engines/hostapply): systemd reads the changed units.
systemd_reload() {
	if [ -n "$R" ]; then echo "root prefix set: no daemon-reload"
	elif [ -d /run/systemd/system ]; then systemctl daemon-reload
	else echo "systemd is not running: nothing to reload"; fi
}
step reload systemd_reload
validate_mode=auto
# validate_daemon CANDIDATE (internal/engines/hostapply, --docker-validate): check a
# new daemon.json before it is installed. Set by Go before it:
#   validate_mode  "none" (skip, and say so), "auto" (dockerd itself) or a
#                  command line, run as sh -c "$validate_mode" rdggen-validate CANDIDATE
# auto: dockerd >= 23 has --validate; older ones load the file before their
# root check, so running them as nobody reports file errors without starting
# anything. nobody may not open the candidate (a hardened daemon.json is
# 0600, and so is its staged copy): it reads it from a pipe that nobody's own
# shell makes, fed from a descriptor root opened (a pipe root made would be
# root's, and /dev/stdin would not open).
validate_daemon() {
	case $validate_mode in
	none) echo "dockerd check skipped (--docker-validate none); checked by rdggen only"; return 0;;
	auto) ;;
	*) sh -c "$validate_mode" rdggen-validate "$1"; return;;
	esac
	command -v dockerd >/dev/null 2>&1 || { echo "dockerd is not installed: checked by rdggen only"; return 0; }
	out=$(dockerd --validate --config-file "$1" 2>&1) && { echo "$out"; return 0; }
	case $out in
	*"unknown flag: --validate"*)
		command -v setpriv >/dev/null 2>&1 || { echo "dockerd has no --validate and setpriv is missing: checked by rdggen only"; return 0; }
		out=$(timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'cat <&3 | dockerd --config-file /dev/stdin' 3<"$1" 2>&1)
		case $out in *"unable to configure the Docker daemon"*) echo "$out"; return 1;; esac
		echo "dockerd (no --validate) loads the file as nobody without complaint"; return 0;;
	esac
	echo "$out"; return 1
}
restart_mode=auto
# restart_docker (internal/engines/hostapply, --docker-restart): restart Docker after
# a new daemon.json. Set by Go before it:
#   restart_mode  "none" (skip, and say so), "auto" (its service) or a
#                 command line, run as sh -c "$restart_mode"
restart_docker() {
	case $restart_mode in
	none) echo "docker restart skipped (--docker-restart none): restart Docker for the new daemon.json to take effect"; return 0;;
	auto) ;;
	*) sh -c "$restart_mode"; return;;
	esac
	if [ -d /run/systemd/system ] && systemctl cat docker.service >/dev/null 2>&1; then systemctl restart docker.service
	elif [ -x /etc/init.d/docker ]; then /etc/init.d/docker restart
	else echo "docker is not installed as a service: nothing to restart"; fi
}
daemon_path=/etc/docker/daemon.json
# daemon_install MODE OLDSUM BACKUP NEWDATA (internal/engines/hostapply): refuse a
# file changed since the probe (OLDSUM its SHA-256, "-" when it did not
# exist), stage the new file beside the old one, validate it
# (validate_daemon), back the old one up, rename the new one into place,
# restart Docker (restart_docker); when the restart fails, put the old file
# back and restart again. Set by Go before it:
#   daemon_path  Docker's daemon.json
daemon_install() {
	f="$R$daemon_path"
	if [ "$2" = - ]; then
		[ ! -e "$f" ] || { echo "$f appeared since the plan was made: not touched; run apply again"; return 3; }
	else
		s=$(sha256sum 2>/dev/null <"$f" | cut -d' ' -f1)
		[ "$s" = "$2" ] || { echo "$f changed since the plan was made: not touched; run apply again"; return 3; }
	fi
	mkdir -p "${f%/*}" || return 1
	new="${f%/*}/.daemon.json.rdggen-new"
	{ cp "$4" "$new" && chmod "$1" "$new"; } || { rm -f "$new"; return 1; }
	[ ! -e "$f" ] || chown --reference="$f" "$new" 2>/dev/null || true # the owner, like the mode, stays
	if ! validate_daemon "$new"; then rm -f "$new"; echo "the new file was rejected: $f not changed"; return 4; fi
	b=$3; i=1
	while [ -e "$b" ]; do b="$3.$i"; i=$((i + 1)); done
	if [ -e "$f" ]; then cp -p "$f" "$b" || { rm -f "$new"; echo "cannot write the backup $b: $f not changed"; return 1; }; fi
	sync "$new" 2>/dev/null
	mv -f "$new" "$f" || return 1
	[ "$2" = - ] || echo "backup: $b"
	if ! restart_docker; then
		if [ -e "$b" ] && [ "$2" != - ]; then
			cp -p "$b" "$f" && echo "docker restart failed with the new file: the previous one is back in place"
		else
			rm -f "$f" && echo "docker restart failed with the new file: it was removed again"
		fi
		restart_docker
		return 5
	fi
}
base64 -d >"$T/d8" <<'RDGGEN_0123456789abcdef'
ewogICJiaXAiOiAiMTcyLjE2LjQxLjEvMjQiLAogICJmaXhlZC1jaWRyIjogIjE3Mi4xNi40MS4w
LzI0IiwKICAibXR1IjogMTUwMCwKICAiZG5zIjogWyI4LjguOC44IiwgIjguOC40LjQiXQp9Cg==
RDGGEN_0123456789abcdef
step daemon daemon_install 644 - "$R"/etc/docker/daemon.json.rdggen-20250101T000000Z.bak "$T/d8"
step forwarding sysctl -qw net.ipv4.conf.all.forwarding=1
step mtu ip link set dev enp1f0 mtu 1500
base64 -d >"$T/d9" <<'RDGGEN_0123456789abcdef'
IyEvYmluL3NoCiMgcmRnZ2VuOiBmaXJld2FsbCBhbmQgYWRkcmVzcyB0cmFuc2xhdGlvbiBvZiBj
bHgtbWxkLTQxJ3MgY29udGFpbmVycyAoY2x1c3RlciBjbHgtbWxkKS4KIyBJbnN0YWxsZWQgYXMg
L2V0Yy9yZGdnZW4vZmlyZXdhbGwuc2g7IHJkZ2dlbi1maXJld2FsbC5zZXJ2aWNlIHJ1bnMgaXQg
YWZ0ZXIgZXZlcnkgc3RhcnQgb2YKIyBkb2NrZXIuc2VydmljZSwgYmVjYXVzZSBkb2NrZXJkIHB1
dHMgaXRzIE1BU1FVRVJBREUgcnVsZSBiYWNrIG9uIHRvcCBvZiBQT1NUUk9VVElORyB3aGVuIGl0
IHN0YXJ0cy4KIyBSREdHRU4tQ09OVEFJTkVSUyAoZmlsdGVyLCBmaXJzdCBydWxlIG9mIERPQ0tF
Ui1VU0VSKTogb3ZlciBlbnAxZjAsIG5ldyBjb25uZWN0aW9ucyB0byB0aGlzCiMgaG9zdCdzIGNv
bnRhaW5lcnMgKDE3Mi4xNi40MS4wLzI0KSBhcmUgYWNjZXB0ZWQgZnJvbSB0aGUgb3RoZXIgaG9z
dHMnIGNvbnRhaW5lcnMgYW5kIGRyb3BwZWQgZnJvbQojIGFueXdoZXJlIGVsc2UsIHdoYXRldmVy
IHRoZSBGT1JXQVJEIHBvbGljeSAoZG9ja2VyZCBsZWF2ZXMgaXQgYXQgQUNDRVBUIHdoZXJlIGZv
cndhcmRpbmcgd2FzCiMgYWxyZWFkeSBvbiB3aGVuIGl0IHN0YXJ0ZWQpLgojIFJER0dFTi1QT1NU
Uk9VVElORyAobmF0LCBmaXJzdCBydWxlIG9mIFBPU1RST1VUSU5HKTogdHJhZmZpYyBmcm9tIDE3
Mi4xNi40MS4wLzI0IHRvIHRoZSBvdGhlciBob3N0cycKIyBjb250YWluZXJzIGtlZXBzIGl0cyBj
b250YWluZXIgc291cmNlIGFkZHJlc3MgKE9wZW4gTVBJJ3MgVENQIHRyYW5zcG9ydCBkcm9wcyBj
b25uZWN0aW9ucyBmcm9tCiMgYW4gYWRkcmVzcyB0aGUgcGVlciBkaWQgbm90IHB1Ymxpc2gpOyBE
b2NrZXIncyBNQVNRVUVSQURFIHN0aWxsIGFwcGxpZXMgdG8gZXZlcnl0aGluZyBlbHNlLgpzZXQg
LWV1CiMgZmlyc3RfcnVsZSBUQUJMRSBDSEFJTiBUQVJHRVQ6IENIQUlOJ3MgZmlyc3QgcnVsZSBq
dW1wcyB0byBUQVJHRVQsIGFuZCBubyBvdGhlciBydWxlIGRvZXMuCmZpcnN0X3J1bGUoKSB7Cglp
cHRhYmxlcyAtdyAtdCAiJDEiIC1JICIkMiIgMSAtaiAiJDMiCglpcHRhYmxlcyAtdyAtdCAiJDEi
IC1TICIkMiIgfCBhd2sgLXYgcj0iLUEgJDIgLWogJDMiICdOUiA+IDIgJiYgJDAgPT0gciB7IHBy
aW50IE5SIC0gMSB9JyB8IHNvcnQgLXJuIHwKCXdoaWxlIHJlYWQgLXIgbjsgZG8gaXB0YWJsZXMg
LXcgLXQgIiQxIiAtRCAiJDIiICIkbiI7IGRvbmUKfQppcHRhYmxlcyAtdyAtbiAtTCBET0NLRVIt
VVNFUiA+L2Rldi9udWxsIDI+JjEgfHwgaXB0YWJsZXMgLXcgLU4gRE9DS0VSLVVTRVIKaXB0YWJs
ZXMtcmVzdG9yZSAtLW5vZmx1c2ggPDwnRU9GJwoqZmlsdGVyCjpSREdHRU4tQ09OVEFJTkVSUyAt
IFswOjBdCi1BIFJER0dFTi1DT05UQUlORVJTIC1zIDE3Mi4xNi40Mi4wLzIzIC1kIDE3Mi4xNi40
MS4wLzI0IC1pIGVucDFmMCAtbyBkb2NrZXIwIC1qIEFDQ0VQVAotQSBSREdHRU4tQ09OVEFJTkVS
UyAtcyAxNzIuMTYuNDQuMC8yMiAtZCAxNzIuMTYuNDEuMC8yNCAtaSBlbnAxZjAgLW8gZG9ja2Vy
MCAtaiBBQ0NFUFQKLUEgUkRHR0VOLUNPTlRBSU5FUlMgLXMgMTcyLjE2LjQ4LjAvMjQgLWQgMTcy
LjE2LjQxLjAvMjQgLWkgZW5wMWYwIC1vIGRvY2tlcjAgLWogQUNDRVBUCi1BIFJER0dFTi1DT05U
QUlORVJTIC1kIDE3Mi4xNi40MS4wLzI0IC1pIGVucDFmMCAtbyBkb2NrZXIwIC1tIGNvbm50cmFj
ayAhIC0tY3RzdGF0ZSBSRUxBVEVELEVTVEFCTElTSEVEIC1qIERST1AKQ09NTUlUCipuYXQKOlJE
R0dFTi1QT1NUUk9VVElORyAtIFswOjBdCi1BIFJER0dFTi1QT1NUUk9VVElORyAtcyAxNzIuMTYu
NDEuMC8yNCAtZCAxNzIuMTYuNDIuMC8yMyAtaiBBQ0NFUFQKLUEgUkRHR0VOLVBPU1RST1VUSU5H
IC1zIDE3Mi4xNi40MS4wLzI0IC1kIDE3Mi4xNi40NC4wLzIyIC1qIEFDQ0VQVAotQSBSREdHRU4t
UE9TVFJPVVRJTkcgLXMgMTcyLjE2LjQxLjAvMjQgLWQgMTcyLjE2LjQ4LjAvMjQgLWogQUNDRVBU
CkNPTU1JVApFT0YKZmlyc3RfcnVsZSBmaWx0ZXIgRE9DS0VSLVVTRVIgUkRHR0VOLUNPTlRBSU5F
UlMKZmlyc3RfcnVsZSBuYXQgUE9TVFJPVVRJTkcgUkRHR0VOLVBPU1RST1VUSU5HCg==
RDGGEN_0123456789abcdef
step firewall sh "$T/d9"
base64 -d >"$T/d10" <<'RDGGEN_0123456789abcdef'
cm91dGUgcmVwbGFjZSAxNzIuMTYuNDIuMC8yNCB2aWEgMzEuMzEuMzEuNDIgZGV2IGVucDFmMApy
b3V0ZSByZXBsYWNlIDE3Mi4xNi40My4wLzI0IHZpYSAzMS4zMS4zMS40MyBkZXYgZW5wMWYwCnJv
dXRlIHJlcGxhY2UgMTcyLjE2LjQ0LjAvMjQgdmlhIDMxLjMxLjMxLjQ0IGRldiBlbnAxZjAKcm91
dGUgcmVwbGFjZSAxNzIuMTYuNDUuMC8yNCB2aWEgMzEuMzEuMzEuNDUgZGV2IGVucDFmMApyb3V0
ZSByZXBsYWNlIDE3Mi4xNi40Ni4wLzI0IHZpYSAzMS4zMS4zMS40NiBkZXYgZW5wMWYwCnJvdXRl
IHJlcGxhY2UgMTcyLjE2LjQ3LjAvMjQgdmlhIDMxLjMxLjMxLjQ3IGRldiBlbnAxZjAKcm91dGUg
cmVwbGFjZSAxNzIuMTYuNDguMC8yNCB2aWEgMzEuMzEuMzEuNDggZGV2IGVucDFmMAo=
RDGGEN_0123456789abcdef
step routes ip -force -batch "$T/d10"
step roce env RDGGEN_SYSFS="$R/sys" sh -c "$RS" rdggen-roce-qos apply
load_mode=auto
# load_module NAME (internal/engines/hostapply, --module-load): load a kernel module.
# Set by Go before it:
#   load_mode  "none" (skip, and say so), "auto" (modprobe) or a command
#              line, run as sh -c "$load_mode" rdggen-load NAME
load_module() {
	case $load_mode in
	none) echo "module load skipped (--module-load none): modprobe $1 on the VM";;
	auto) modprobe "$1";;
	*) sh -c "$load_mode" rdggen-load "$1";;
	esac
}
step peermem load_module nvidia-peermem
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
printf '@rdggen %s done\n' "$N"
