# The rails' part of the hosts probe (internal/engines/hostapply), for a VM
# with several rails: the live state that apply and check compare with what
# pkg/railnet sets up. Read-only; live state, so none of it is under $R.
# Set by Go before it:
#   rp_tables  each rail's routing table number, in rail order ("100 101")
#   rp_proc    the rails' sysctls as paths under /proc/sys
#              ("net/ipv4/conf/all/arp_ignore …")
#   rp_gw      one line per rail (for ping_rails, which only check runs), "<rail> <interface> <gateway>"
#
# probe_rails: results
#   rlinks   ip -o link show: every interface, its flags, MTU, state, MAC
#   raddrs   ip -4 -o addr show: every interface's IPv4 addresses
#   rrules   ip -4 rule show
#   rtnames  the table names iproute2 prints instead of numbers (its
#            rt_tables files, the same ones rails.sh of pkg/railnet reads)
#   rt:N     ip -4 route show table N, per rail's table
#   rsysctl  "<path> <value>" per sysctl ("-" when it cannot be read)
# ping_rails: result rp:<rail> per rail, ping -I <interface> of its gateway
# (two echo requests 0.2 s apart, one second for the last answer): what
# the rail's address sends on its own interface reaches its leaf.

rails_rtnames() {
	cat /etc/iproute2/rt_tables /etc/iproute2/rt_tables.d/*.conf \
		/usr/share/iproute2/rt_tables /usr/share/iproute2/rt_tables.d/*.conf 2>/dev/null
	return 0
}

rails_sysctl() {
	for p in $rp_proc; do
		v=; read -r v 2>/dev/null <"/proc/sys/$p"
		echo "$p ${v:--}"
	done
}

probe_rails() {
	fr rlinks ip -o link show
	fr raddrs ip -4 -o addr show
	fr rrules ip -4 rule show
	fr rtnames rails_rtnames
	for t in $rp_tables; do
		fr "rt:$t" ip -4 route show table "$t"
	done
	fr rsysctl rails_sysctl
}

ping_rails() {
	while read -r r i g <&3; do
		[ -n "$g" ] || continue
		fr "rp:$r" ping -n -c 2 -i 0.2 -W 1 -I "$i" "$g"
	done 3<<EOF
$rp_gw
EOF
}
