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
