#!/bin/sh
# rdggen: the 2 rails of b2, applied live. Run as root; safe to run again.
# The same at boot: /etc/netplan/61-rdggen-rails.yaml and /etc/sysctl.d/60-rdggen-rails.conf.
set -eu
rails_sysctl='net.ipv4.conf.all.arp_ignore=2 net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.all.rp_filter=2'
rails='ens224 - 10.2.0.22/24 10.2.0.0/24 10.2.0.254 9000 100 1000 100 10.1.0.0/23 10.2.0.0/23
ens256 - 10.2.1.22/24 10.2.1.0/24 10.2.1.254 9000 101 1001 101 10.1.0.0/23 10.2.0.0/23
'
# The rails of a VM, applied live (pkg/railnet): what its netplan file
# (61-rdggen-rails.yaml) and sysctl.d file (60-rdggen-rails.conf) set up at
# boot. rails_apply, safe to run again:
#   1. the sysctls, with sysctl -w;
#   2. per rail, in rail order: its interface (found by its MAC address when
#      it has one, and renamed to the rail's name if it has another), its MTU,
#      up, its address (ip addr replace); its routes with one ip -batch:
#      every peer via the gateway in the main table with the rail's metric,
#      the rail's own subnet on the link and every peer via the gateway in
#      the rail's table (ip route replace); the rule `from <address> table
#      <table> priority <priority>`, added only when `ip rule` does not list
#      it already.
# It stops at the first failure, says which rail and what failed on stderr,
# and returns 1. It never removes a rule or a route. Set by Go before it:
#   rails_sysctl  the settings, "key=value" words
#   rails         one line per rail, in rail order, of the words
#                 "interface mac address subnet gateway mtu table priority
#                 metric peer…" (mac "-" when the rail is found by its name)

# rails_dev MAC prints the name of the interface whose MAC address is MAC
# (lower case), nothing when there is none.
rails_dev() {
	ip -o link show | awk -v m="link/ether $1 " 'index($0, m) { n = $2; sub(/:$/, "", n); sub(/@.*/, "", n); print n; exit }'
}

# rails_table_name TABLE prints the name iproute2 shows for table number
# TABLE (from its rt_tables files), nothing when it has none.
rails_table_name() {
	cat /etc/iproute2/rt_tables /etc/iproute2/rt_tables.d/*.conf \
		/usr/share/iproute2/rt_tables /usr/share/iproute2/rt_tables.d/*.conf 2>/dev/null |
		awk -v t="$1" '$1 == t { print $2; exit }'
}

# rails_rule ADDRESS TABLE PRIORITY succeeds when `ip rule` lists the rule
# "PRIORITY: from ADDRESS lookup TABLE" (TABLE by number or by its name).
rails_rule() {
	ip -4 rule show | awk -v p="$3:" -v a="$1" -v t="$2" -v n="$(rails_table_name "$2")" \
		'$1 == p && $2 == "from" && $3 == a && $4 == "lookup" && ($5 == t || $5 == n) { f = 1 } END { exit !f }'
}

rails_fail() {
	echo "rdggen rails: $*" >&2
	return 1
}

rails_apply() {
	# shellcheck disable=SC2086 # rails_sysctl is a list of key=value words
	sysctl -qw $rails_sysctl || rails_fail "cannot set $rails_sysctl" || return 1
	r=0
	while read -r ifname mac addr subnet gw mtu table prio metric peers <&3; do
		[ -n "$ifname" ] || continue
		if [ "$mac" != - ]; then
			dev=$(rails_dev "$mac")
			[ -n "$dev" ] || rails_fail "rail $r: no interface has the MAC address $mac ($ifname)" || return 1
			if [ "$dev" != "$ifname" ]; then
				{ ip link set dev "$dev" down && ip link set dev "$dev" name "$ifname"; } ||
					rails_fail "rail $r: cannot rename $dev ($mac) to $ifname" || return 1
			fi
		fi
		ip link show dev "$ifname" >/dev/null 2>&1 || rails_fail "rail $r: no interface $ifname" || return 1
		ip link set dev "$ifname" mtu "$mtu" up || rails_fail "rail $r: cannot set $ifname up with MTU $mtu" || return 1
		ip addr replace "$addr" dev "$ifname" || rails_fail "rail $r: cannot give $ifname the address $addr" || return 1
		{
			for p in $peers; do
				echo "route replace $p via $gw dev $ifname metric $metric"
			done
			echo "route replace $subnet dev $ifname scope link table $table"
			for p in $peers; do
				echo "route replace $p via $gw dev $ifname table $table"
			done
		} | ip -batch - || rails_fail "rail $r: the routes via $ifname failed" || return 1
		a=${addr%/*}
		if ! rails_rule "$a" "$table" "$prio"; then
			ip -4 rule add from "$a" table "$table" priority "$prio" ||
				rails_fail "rail $r: cannot add the rule from $a table $table" || return 1
		fi
		r=$((r + 1))
	done 3<<EOF
$rails
EOF
}
rails_apply
