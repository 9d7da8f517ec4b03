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
ssh_dir=/etc/rdggen/worker-ssh
worker=hvd-worker
image=horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5
port=12345
addr=172.16.41.2
# The workers probe (internal/engines/workerapply): docker's version, the SSH
# directory's mode, each SSH file's mode and SHA-256 (never a private key's
# bytes), the worker container, the image, and, when the worker runs, the
# host key its sshd presents at the hostfile's address (keyscan: ssh-keyscan,
# 4 s a try, up to 3 tries a second apart, as a loaded VM's sshd can miss one).
# Set by Go before it:
#   ssh_dir  the worker's SSH directory on the VM (under $R)
#   worker   the worker container's name
#   image    its image (inventory: horovod.image)
#   port     its sshd's port; addr its address
# and then calls probe_worker FILE... (the SSH files' names).
nodocker() { echo "docker: command not found"; return 127; }
files() {
	cd "$R$ssh_dir" 2>/dev/null || return 0
	for f do [ -f "$f" ] && printf '%s %s ' "$f" "$(stat -c %a "$f")" && sha256sum <"$f"; done
	return 0
}
keyscan() {
	n=1
	while :; do
		out=$(ssh-keyscan -T 4 -t ed25519 -p "$port" "$addr" 2>/dev/null)
		case $out in *ssh-ed25519*) printf '%s\n' "$out"; return 0;; esac
		[ "$n" -lt 3 ] || return 1
		sleep 1; n=$((n + 1))
	done
}
probe_worker() {
	if command -v docker >/dev/null 2>&1; then fr docker docker version --format '{{.Server.Version}}'; else fr docker nodocker; fi
	fr dir stat -c %a "$R$ssh_dir"
	fr files files "$@"
	fr inspect docker inspect --type container "$worker"
	fr image docker image inspect --format '{{.Id}}' "$image"
	if [ "$(docker inspect --type container -f '{{.State.Running}}' "$worker" 2>/dev/null)" = true ]; then
		fr keyscan keyscan
	fi
}
probe_worker sshd_config ssh_host_ed25519_key ssh_host_ed25519_key.pub id_ed25519 id_ed25519.pub authorized_keys known_hosts config
fw_chain=RDGGEN-CONTAINERS
user_chain=DOCKER-USER
nat_chain=RDGGEN-POSTROUTING
# The checks between the workers (internal/engines/workerapply, peers.go). Set by Go
# before it:
#   WS          worker.sh, the script run inside the worker
#   fw_chain    rdggen's filter chain; user_chain the chain that jumps to it
#   nat_chain   rdggen's nat chain
# and probe.sh's worker.

# worker_probe MARK PORT WAIT MOST ADDR...: worker.sh in the worker, when it
# runs (result "worker").
worker_probe() {
	if [ "$(docker inspect --type container -f '{{.State.Running}}' "$worker" 2>/dev/null)" = true ]; then
		fr worker docker exec "$worker" sh -c "$WS" rdggen "$@"
	fi
}
# rules_probe ADDR...: nat POSTROUTING and rdggen's nat chain, the chain
# that jumps to rdggen's filter chain and that chain, and `ip route get` of
# each peer's worker address ADDR (one `ip -batch`; none without peers).
rules_probe() {
	fr postrouting iptables -w -t nat -S POSTROUTING
	fr natchain iptables -w -t nat -S "$nat_chain"
	fr dockeruser iptables -w -S "$user_chain"
	fr fwchain iptables -w -S "$fw_chain"
	[ $# -gt 0 ] || return 0
	fr routes routes_get "$@"
}
routes_get() { printf 'route get %s\n' "$@" | ip -o -force -batch - 2>&1; }
# shellcheck disable=SC2016 # WS holds a script, run by sh -c "$WS": its expansions are its own
WS='# Runs inside the worker (internal/engines/workerapply, workerProbe), in one
# `docker exec ... sh -c "$WS" rdggen MARK PORT WAIT MOST ADDR...`: the
# result mark, the sshd port, the connect timeout in seconds, how many
# logins at once and the peers'\'' addresses. It reports the worker'\''s
# interfaces (result "ifaces"); what NCCL needs of the container for RDMA
# with GPUDirect ("inside"): "memlock N" (ulimit -l, KiB or "unlimited":
# memory registration pins buffers, NVIDIA/nccl-tests#206), "gdr V" (the
# container'\''s NCCL_NET_GDR_LEVEL) and "dev NAME" per entry of
# /dev/infiniband (libibverbs opens uverbsN there; without it NCCL falls
# back to sockets, NVIDIA/nccl#451); then an ssh login to each peer that
# prints $SSH_CONNECTION, the source address its sshd saw ("1", "2", ... in
# the peers'\'' order), at most MOST at a time. Each part reports, when it
# ends, "\n<mark> <name> <exit status>\n" and its output in one printf: one
# write to the pipe, which POSIX keeps whole up to PIPE_BUF (at least 512
# bytes, 4096 on Linux; a login prints one line), so logins that end
# together do not mix their lines. It needs nothing but the shell, ls, cat
# and ssh: a worker image may lack mktemp and rm. BatchMode: the cluster'\''s
# key or nothing, never a prompt.
mark=$1 port=$2 wait=$3 most=$4; shift 4
o=$(ls /sys/class/net 2>&1); printf '\''\n%s ifaces %s\n%s\n'\'' "$mark" "$?" "$o"
inside() {
	# shellcheck disable=SC3045 # ulimit -l is not in POSIX, but dash, busybox ash and bash have it; where it fails the report says so
	echo "memlock $(ulimit -l)"
	echo "gdr ${NCCL_NET_GDR_LEVEL-}"
	for f in /dev/infiniband/*; do [ -e "$f" ] && echo "dev ${f##*/}"; done
	true
}
o=$({ inside; } 2>&1); printf '\''\n%s inside %s\n%s\n'\'' "$mark" "$?" "$o"
i=0 n=0
for a in "$@"; do
	i=$((i + 1))
	{ o=$(ssh -p "$port" -o BatchMode=yes -o ConnectTimeout="$wait" "$a" '\''echo "$SSH_CONNECTION"'\'' </dev/null 2>&1); printf '\''\n%s %s %s\n%s\n'\'' "$mark" "$i" "$?" "$o"; } &
	n=$((n + 1))
	if [ "$n" -ge "$most" ]; then wait; n=0; fi
done
wait
'
worker_probe rdggen-part-0123456789abcdef 12345 5 8 172.16.42.2
rules_probe 172.16.42.2 172.16.43.2 172.16.44.2 172.16.45.2 172.16.46.2 172.16.47.2 172.16.48.2
printf '@rdggen %s done\n' "$N"
