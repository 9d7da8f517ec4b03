# Runs inside the worker (internal/engines/workerapply, workerProbe), in one
# `docker exec ... sh -c "$WS" rdggen MARK PORT WAIT MOST ADDR...`: the
# result mark, the sshd port, the connect timeout in seconds, how many
# logins at once and the peers' addresses. It reports the worker's
# interfaces (result "ifaces"); what NCCL needs of the container for RDMA
# with GPUDirect ("inside"): "memlock N" (ulimit -l, KiB or "unlimited":
# memory registration pins buffers, NVIDIA/nccl-tests#206), "gdr V" (the
# container's NCCL_NET_GDR_LEVEL) and "dev NAME" per entry of
# /dev/infiniband (libibverbs opens uverbsN there; without it NCCL falls
# back to sockets, NVIDIA/nccl#451); then an ssh login to each peer that
# prints $SSH_CONNECTION, the source address its sshd saw ("1", "2", ... in
# the peers' order), at most MOST at a time. Each part reports, when it
# ends, "\n<mark> <name> <exit status>\n" and its output in one printf: one
# write to the pipe, which POSIX keeps whole up to PIPE_BUF (at least 512
# bytes, 4096 on Linux; a login prints one line), so logins that end
# together do not mix their lines. It needs nothing but the shell, ls, cat
# and ssh: a worker image may lack mktemp and rm. BatchMode: the cluster's
# key or nothing, never a prompt.
mark=$1 port=$2 wait=$3 most=$4; shift 4
o=$(ls /sys/class/net 2>&1); printf '\n%s ifaces %s\n%s\n' "$mark" "$?" "$o"
inside() {
	# shellcheck disable=SC3045 # ulimit -l is not in POSIX, but dash, busybox ash and bash have it; where it fails the report says so
	echo "memlock $(ulimit -l)"
	echo "gdr ${NCCL_NET_GDR_LEVEL-}"
	for f in /dev/infiniband/*; do [ -e "$f" ] && echo "dev ${f##*/}"; done
	true
}
o=$({ inside; } 2>&1); printf '\n%s inside %s\n%s\n' "$mark" "$?" "$o"
i=0 n=0
for a in "$@"; do
	i=$((i + 1))
	{ o=$(ssh -p "$port" -o BatchMode=yes -o ConnectTimeout="$wait" "$a" 'echo "$SSH_CONNECTION"' </dev/null 2>&1); printf '\n%s %s %s\n%s\n' "$mark" "$i" "$?" "$o"; } &
	n=$((n + 1))
	if [ "$n" -ge "$most" ]; then wait; n=0; fi
done
wait
