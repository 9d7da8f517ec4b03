#!/bin/sh
# rdggen: container networking of h14 (cluster brk). Run as root; safe to run again.
# `rdggen apply --target hosts` does the same and installs the persistent forms:
#   /etc/sysctl.d/60-rdggen-forwarding.conf, /etc/netplan/60-rdggen.yaml,
#   /etc/rdggen/firewall.sh with /etc/systemd/system/rdggen-firewall.service.
set -eu

# 1. Forwarding between docker0 and enp1f0, and the data network's MTU on enp1f0.
sysctl -qw net.ipv4.conf.all.forwarding=1
ip link set dev enp1f0 mtu 9000

# 2. Firewall and address translation, the same as /etc/rdggen/firewall.sh:
#    RDGGEN-CONTAINERS (filter, first rule of DOCKER-USER): over enp1f0, new connections to this
#    host's containers (172.16.14.0/24) are accepted from the container pool 172.16.0.0/16 (the
#    cluster's containers, routed by the switch) and dropped from anywhere else, whatever the
#    FORWARD policy (dockerd leaves it at ACCEPT where forwarding was already on when it started).
#    RDGGEN-POSTROUTING (nat, first rule of POSTROUTING): traffic from 172.16.14.0/24 to the
#    container pool 172.16.0.0/16 keeps its container source address (Open MPI's TCP transport
#    drops connections from an address the peer did not publish); Docker's MASQUERADE still
#    applies to everything else.
# first_rule TABLE CHAIN TARGET: CHAIN's first rule jumps to TARGET, and no other rule does.
first_rule() {
	iptables -w -t "$1" -I "$2" 1 -j "$3"
	iptables -w -t "$1" -S "$2" | awk -v r="-A $2 -j $3" 'NR > 2 && $0 == r { print NR - 1 }' | sort -rn |
	while read -r n; do iptables -w -t "$1" -D "$2" "$n"; done
}
iptables -w -n -L DOCKER-USER >/dev/null 2>&1 || iptables -w -N DOCKER-USER
iptables-restore --noflush <<'EOF'
*filter
:RDGGEN-CONTAINERS - [0:0]
-A RDGGEN-CONTAINERS -s 172.16.0.0/16 -d 172.16.14.0/24 -i enp1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -d 172.16.14.0/24 -i enp1f0 -o docker0 -m conntrack ! --ctstate RELATED,ESTABLISHED -j DROP
COMMIT
*nat
:RDGGEN-POSTROUTING - [0:0]
-A RDGGEN-POSTROUTING -s 172.16.14.0/24 -d 172.16.0.0/16 -j ACCEPT
COMMIT
EOF
first_rule filter DOCKER-USER RDGGEN-CONTAINERS
first_rule nat POSTROUTING RDGGEN-POSTROUTING

# 3. Routes: the whole container pool 172.16.0.0/16 and the other leaves' data subnets via 10.1.1.254,
#    the address of this host's leaf leaf1 on its data subnet; the leaves route each host's subnet to
#    that host. docker0's own subnet 172.16.14.0/24 stays local: its connected route is more specific.
ip -force -batch - <<'EOF'
route replace 172.16.0.0/16 via 10.1.1.254 dev enp1f0  # the container pool, routed by leaf leaf1
route replace 10.1.2.0/24 via 10.1.1.254 dev enp1f0  # another leaf's data subnet, via leaf leaf1
route replace 10.1.3.0/24 via 10.1.1.254 dev enp1f0  # another leaf's data subnet, via leaf leaf1
EOF
