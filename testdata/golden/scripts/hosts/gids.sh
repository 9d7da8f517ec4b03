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
printf '@rdggen %s done\n' "$N"
