# runtime, on Docker >= 19.03 (the workers use --gpus; internal/engines/hostapply,
# guestProbe): whether the NVIDIA Container Toolkit's hook is installed.
hook() {
	for b in nvidia-container-runtime-hook nvidia-container-toolkit; do
		if [ -n "$R" ]; then
			for d in /usr/bin /usr/local/bin /usr/sbin; do [ -x "$R$d/$b" ] && { echo "$d/$b"; return 0; }; done
		else
			command -v "$b" && return 0
		fi
	done
	return 1
}
fr runtime hook
