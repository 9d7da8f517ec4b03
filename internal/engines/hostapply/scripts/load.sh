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
