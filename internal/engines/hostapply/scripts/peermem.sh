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
