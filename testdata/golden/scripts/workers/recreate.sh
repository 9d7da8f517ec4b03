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
worker=hvd-worker
# The workers' changes (internal/engines/workerapply, applyScript), after probe.sh's
# variables (worker). make_dir DIR: the SSH directory, 0700 before any
# private key is written into it. recreate CMD...: remove the worker, then
# run CMD (docker run ...).
make_dir() { mkdir -p "$1" && chmod 700 "$1"; }
recreate() { docker rm -f "$worker" >/dev/null && "$@"; }
# wait_worker ADDR PORT SECONDS KEY: until the worker's sshd presents KEY at
# ADDR:PORT, or the container stops or restarts, or SECONDS pass; then its log.
wait_worker() {
	i=0
	while [ "$i" -lt "$3" ]; do
		st=$(docker inspect --type container -f '{{.State.Status}} {{.RestartCount}}' "$worker") || return 1
		case $st in
		"running 0") ;;
		*) echo "$worker is not running (state, restarts: $st): its sshd did not start. Its log:"; docker logs --tail 15 "$worker" 2>&1; return 1;;
		esac
		if ssh-keyscan -T 2 -t ed25519 -p "$2" "$1" 2>/dev/null | grep -qF "$4"; then return 0; fi
		sleep 1; i=$((i + 1))
	done
	echo "the sshd of $worker does not answer on $1 port $2 with the cluster's host key after $3 s. Its log:"
	docker logs --tail 15 "$worker" 2>&1
	return 1
}
umask 077
step container recreate docker run -d --name hvd-worker --restart unless-stopped --label org.rdggen.worker-config=3ec289d36182271c --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all --device=/dev/infiniband --cap-add=IPC_LOCK --ulimit memlock=-1 --shm-size=1g -v /etc/rdggen/worker-ssh:/root/.ssh:ro -e NCCL_IB_HCA=mlx5_0 -e NCCL_IB_TC=106 -e NCCL_SOCKET_IFNAME=eth0 -e NCCL_NET_GDR_LEVEL=PHB horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5 sh -c 'mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e -f /root/.ssh/sshd_config'
step ready wait_worker 172.16.41.2 12345 60 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGhvc3Q= rdggen'
printf '@rdggen %s done\n' "$N"
