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
step dir make_dir "$R"/etc/rdggen/worker-ssh
base64 -d >"$T/d1" <<'RDGGEN_0123456789abcdef'
IyByZGdnZW46IHNzaGQgb2YgdGhlIEhvcm92b2Qgd29ya2VycyBvZiBjbHVzdGVyIGNseC1tbGQs
IHN0YXJ0ZWQgYnkgdGhlIHdvcmtlcgojIGNvbnRhaW5lciBhczogc3NoZCAtRCAtZSAtZiAvcm9v
dC8uc3NoL3NzaGRfY29uZmlnClBvcnQgMTIzNDUKSG9zdEtleSAvcm9vdC8uc3NoL3NzaF9ob3N0
X2VkMjU1MTlfa2V5CkF1dGhvcml6ZWRLZXlzRmlsZSAvcm9vdC8uc3NoL2F1dGhvcml6ZWRfa2V5
cwpQZXJtaXRSb290TG9naW4gcHJvaGliaXQtcGFzc3dvcmQKUHVia2V5QXV0aGVudGljYXRpb24g
eWVzClBhc3N3b3JkQXV0aGVudGljYXRpb24gbm8KQ2hhbGxlbmdlUmVzcG9uc2VBdXRoZW50aWNh
dGlvbiBubwpVc2VQQU0gbm8KVXNlRE5TIG5vClByaW50TW90ZCBubwo=
RDGGEN_0123456789abcdef
step file:sshd_config put_file "$R"/etc/rdggen/worker-ssh/sshd_config 644 "$T/d1"
base64 -d >"$T/d2" <<'RDGGEN_0123456789abcdef'
LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KaG9zdAotLS0tLUVORCBPUEVOU1NI
IFBSSVZBVEUgS0VZLS0tLS0K
RDGGEN_0123456789abcdef
step file:ssh_host_ed25519_key put_file "$R"/etc/rdggen/worker-ssh/ssh_host_ed25519_key 600 "$T/d2"
base64 -d >"$T/d3" <<'RDGGEN_0123456789abcdef'
c3NoLWVkMjU1MTkgQUFBQUMzTnphQzFsWkRJMU5URTVBQUFBSUdodmMzUT0gcmRnZ2VuIHJkZ2dl
bi13b3JrZXJAY2x4LW1sZAo=
RDGGEN_0123456789abcdef
step file:ssh_host_ed25519_key.pub put_file "$R"/etc/rdggen/worker-ssh/ssh_host_ed25519_key.pub 644 "$T/d3"
base64 -d >"$T/d4" <<'RDGGEN_0123456789abcdef'
LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KY2xpZW50Ci0tLS0tRU5EIE9QRU5T
U0ggUFJJVkFURSBLRVktLS0tLQo=
RDGGEN_0123456789abcdef
step file:id_ed25519 put_file "$R"/etc/rdggen/worker-ssh/id_ed25519 600 "$T/d4"
base64 -d >"$T/d5" <<'RDGGEN_0123456789abcdef'
c3NoLWVkMjU1MTkgQUFBQUMzTnphQzFsWkRJMU5URTVBQUFBSUdOc2FXVnVkQT09IHJkZ2dlbiBy
ZGdnZW4tbXBpQGNseC1tbGQK
RDGGEN_0123456789abcdef
step file:id_ed25519.pub put_file "$R"/etc/rdggen/worker-ssh/id_ed25519.pub 644 "$T/d5"
base64 -d >"$T/d6" <<'RDGGEN_0123456789abcdef'
c3NoLWVkMjU1MTkgQUFBQUMzTnphQzFsWkRJMU5URTVBQUFBSUdOc2FXVnVkQT09IHJkZ2dlbiBy
ZGdnZW4tbXBpQGNseC1tbGQK
RDGGEN_0123456789abcdef
step file:authorized_keys put_file "$R"/etc/rdggen/worker-ssh/authorized_keys 600 "$T/d6"
base64 -d >"$T/d7" <<'RDGGEN_0123456789abcdef'
cmRnZ2VuLXdvcmtlci5jbHgtbWxkIHNzaC1lZDI1NTE5IEFBQUFDM056YUMxbFpESTFOVEU1QUFB
QUlHaHZjM1E9IHJkZ2dlbgo=
RDGGEN_0123456789abcdef
step file:known_hosts put_file "$R"/etc/rdggen/worker-ssh/known_hosts 644 "$T/d7"
base64 -d >"$T/d8" <<'RDGGEN_0123456789abcdef'
IyByZGdnZW46IGhvdyBtcGlydW4gYW5kIGhvcm92b2RydW4gcmVhY2ggdGhlIG90aGVyIHdvcmtl
cnMgb2YgY2x1c3RlciBjbHgtbWxkLgpIb3N0IDE3Mi4xNi40MS4yIDE3Mi4xNi40Mi4yIDE3Mi4x
Ni40My4yIDE3Mi4xNi40NC4yIDE3Mi4xNi40NS4yIDE3Mi4xNi40Ni4yIDE3Mi4xNi40Ny4yIDE3
Mi4xNi40OC4yCglQb3J0IDEyMzQ1CglVc2VyIHJvb3QKCUlkZW50aXR5RmlsZSAvcm9vdC8uc3No
L2lkX2VkMjU1MTkKCUlkZW50aXRpZXNPbmx5IHllcwoJSG9zdEtleUFsaWFzIHJkZ2dlbi13b3Jr
ZXIuY2x4LW1sZAoJVXNlcktub3duSG9zdHNGaWxlIC9yb290Ly5zc2gva25vd25faG9zdHMKCUds
b2JhbEtub3duSG9zdHNGaWxlIC9kZXYvbnVsbAoJU3RyaWN0SG9zdEtleUNoZWNraW5nIHllcwoJ
Q2hlY2tIb3N0SVAgbm8KCUJhdGNoTW9kZSB5ZXMK
RDGGEN_0123456789abcdef
step file:config put_file "$R"/etc/rdggen/worker-ssh/config 644 "$T/d8"
step container docker run -d --name hvd-worker --restart unless-stopped --label org.rdggen.worker-config=3ec289d36182271c --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all --device=/dev/infiniband --cap-add=IPC_LOCK --ulimit memlock=-1 --shm-size=1g -v /etc/rdggen/worker-ssh:/root/.ssh:ro -e NCCL_IB_HCA=mlx5_0 -e NCCL_IB_TC=106 -e NCCL_SOCKET_IFNAME=eth0 -e NCCL_NET_GDR_LEVEL=PHB horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5 sh -c 'mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e -f /root/.ssh/sshd_config'
step ready wait_worker 172.16.41.2 12345 60 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGhvc3Q= rdggen'
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
