# The hosts probe (internal/engines/hostapply): the read-only part of
# `rdggen apply --target hosts`, which its apply script sends again to verify.
# It starts few processes (one stat and one cat for all files, builtins where
# possible): it is what an up-to-date host costs. Set by Go before it:
#   data_dev     the data interface (inventory: hosts[].data_interface)
#   fwd_proc     the forwarding sysctl's file under /proc/sys
#   fw_chain     rdggen's filter chain; user_chain the chain that jumps to it
#   nat_chain    rdggen's nat chain; bridge Docker's bridge
#   RS           the RoCE script (run as sh -c "$RS" rdggen-roce-qos check|apply)
# and then calls probe_files PATH... and probe_host [NETPLAN_DIR...].

# probe_files PATH...: every managed file, links by readlink, regular files
# by one stat and one cat (results "l:PATH", "o:PATH", "stat", "cat").
probe_files() {
	n=$#
	for p do
		f="$R$p"
		if [ -L "$f" ]; then fr "l:$p" readlink -- "$f"
		elif [ -f "$f" ]; then set -- "$@" "$f"
		elif [ -e "$f" ]; then fr "o:$p" true
		fi
	done
	shift "$n"
	if [ $# -gt 0 ]; then fr stat stat -c '%s %a %n' -- "$@"; fr cat cat -- "$@"; fi
}

nodockerd() { return 127; }

# probe_host [NETPLAN_DIR...]: forwarding, the data interface's addresses and
# link, the netplan files of each directory given (none when the OS does not
# use netplan), the routing table, rdggen's iptables chains and the chains
# that jump to them, docker0, dockerd's version, the RoCE script's check and
# the peer-memory module (peermem.sh).
probe_host() {
	v=; read -r v <"/proc/sys/$fwd_proc"; fr forwarding echo "$v"
	fr addr ip -4 -o addr show dev "$data_dev"
	fr link ip -o link show dev "$data_dev"
	for d do
		for f in "$R$d"/*.yaml; do [ -f "$f" ] && fr "np:${f#"$R"}" cat -- "$f"; done
	done
	fr routes ip -4 route show table main
	fr chain iptables -w -S "$fw_chain"
	fr dockeruser iptables -w -S "$user_chain"
	fr nat iptables -w -t nat -S "$nat_chain"
	fr postrouting iptables -w -t nat -S POSTROUTING
	fr docker0 ip -4 -o addr show dev "$bridge"
	if command -v dockerd >/dev/null 2>&1; then fr dockerd dockerd --version; else fr dockerd nodockerd; fi
	fr roce env RDGGEN_SYSFS="$R/sys" sh -c "$RS" rdggen-roce-qos check
	fr peermem pm
}
