#!/bin/sh
# rdggen: container networking of clx-mld-41 (cluster clx-mld). Run as root; safe to run again.
# `rdggen apply --target hosts` does the same and installs the persistent forms:
#   /etc/sysctl.d/60-rdggen-forwarding.conf, /etc/network/if-up.d/rdggen-routes,
#   /etc/rdggen/firewall.rules with /etc/systemd/system/rdggen-firewall.service.
set -eu

# 1. Forwarding between docker0 and enp1f0.
sysctl -qw net.ipv4.conf.all.forwarding=1

# 2. Firewall. Docker sets the FORWARD policy to DROP; accept new connections from the other
#    hosts' containers to this host's (172.16.41.0/24) and nothing else, in chain RDGGEN-CONTAINERS
#    (replaced as one block) jumped to from DOCKER-USER (created here if Docker has not
#    started yet; Docker keeps existing DOCKER-USER rules).
iptables -n -L DOCKER-USER >/dev/null 2>&1 || iptables -N DOCKER-USER
iptables-restore --noflush <<'EOF'
*filter
:RDGGEN-CONTAINERS - [0:0]
-A RDGGEN-CONTAINERS -s 31.31.31.42/31 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 31.31.31.44/30 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 31.31.31.48/32 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 172.16.42.0/23 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 172.16.44.0/22 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 172.16.48.0/24 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT
COMMIT
EOF
iptables -C DOCKER-USER -j RDGGEN-CONTAINERS 2>/dev/null || iptables -I DOCKER-USER 1 -j RDGGEN-CONTAINERS

# 3. Routes: each other host's container subnet via its data address. Never 172.16.41.0/24,
#    docker0's own subnet. `replace` is idempotent where `add` fails on a re-run.
ip -force -batch - <<'EOF'
route replace 172.16.42.0/24 via 31.31.31.42 dev enp1f0  # clx-mld-42
route replace 172.16.43.0/24 via 31.31.31.43 dev enp1f0  # clx-mld-43
route replace 172.16.44.0/24 via 31.31.31.44 dev enp1f0  # clx-mld-44
route replace 172.16.45.0/24 via 31.31.31.45 dev enp1f0  # clx-mld-45
route replace 172.16.46.0/24 via 31.31.31.46 dev enp1f0  # clx-mld-46
route replace 172.16.47.0/24 via 31.31.31.47 dev enp1f0  # clx-mld-47
route replace 172.16.48.0/24 via 31.31.31.48 dev enp1f0  # clx-mld-48
EOF
