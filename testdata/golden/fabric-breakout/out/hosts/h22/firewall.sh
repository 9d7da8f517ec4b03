#!/bin/sh
# rdggen: firewall and address translation of h22's containers (cluster brk).
# Installed as /etc/rdggen/firewall.sh; rdggen-firewall.service runs it after every start of
# docker.service, because dockerd puts its MASQUERADE rule back on top of POSTROUTING when it starts.
# RDGGEN-CONTAINERS (filter, first rule of DOCKER-USER): over enp1f0, new connections to this
# host's containers (172.16.22.0/24) are accepted from the container pool 172.16.0.0/16 (the
# cluster's containers, routed by the switch) and dropped from anywhere else, whatever the
# FORWARD policy (dockerd leaves it at ACCEPT where forwarding was already on when it started).
# RDGGEN-POSTROUTING (nat, first rule of POSTROUTING): traffic from 172.16.22.0/24 to the
# container pool 172.16.0.0/16 keeps its container source address (Open MPI's TCP transport
# drops connections from an address the peer did not publish); Docker's MASQUERADE still
# applies to everything else.
set -eu
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
-A RDGGEN-CONTAINERS -s 172.16.0.0/16 -d 172.16.22.0/24 -i enp1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -d 172.16.22.0/24 -i enp1f0 -o docker0 -m conntrack ! --ctstate RELATED,ESTABLISHED -j DROP
COMMIT
*nat
:RDGGEN-POSTROUTING - [0:0]
-A RDGGEN-POSTROUTING -s 172.16.22.0/24 -d 172.16.0.0/16 -j ACCEPT
COMMIT
EOF
first_rule filter DOCKER-USER RDGGEN-CONTAINERS
first_rule nat POSTROUTING RDGGEN-POSTROUTING
