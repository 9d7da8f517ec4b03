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
printf '@rdggen %s done\n' "$N"
