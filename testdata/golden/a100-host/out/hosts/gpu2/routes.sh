#!/bin/sh
# rdggen: container networking of gpu2 (cluster a100). Run as root; safe to run again.
# `rdggen apply --target hosts` does the same and installs the persistent forms:
#   /etc/sysctl.d/60-rdggen-forwarding.conf, /etc/netplan/60-rdggen.yaml,
#   /etc/rdggen/firewall.rules with /etc/systemd/system/rdggen-firewall.service.
set -eu

# 1. Forwarding between docker0 and ens1f0.
sysctl -qw net.ipv4.conf.all.forwarding=1

# 2. Firewall. Docker sets the FORWARD policy to DROP; accept new connections from the other
#    hosts' containers to this host's (10.200.2.0/24) and nothing else, in chain RDGGEN-CONTAINERS
#    (replaced as one block) jumped to from DOCKER-USER (created here if Docker has not
#    started yet; Docker keeps existing DOCKER-USER rules).
#    Docker ≥ 28.2 also drops routed traffic in the raw table unless daemon.json sets
#    "allow-direct-routing": true, which rdggen's daemon.json does.
iptables -n -L DOCKER-USER >/dev/null 2>&1 || iptables -N DOCKER-USER
iptables-restore --noflush <<'EOF'
*filter
:RDGGEN-CONTAINERS - [0:0]
-A RDGGEN-CONTAINERS -s 100.64.10.1/32 -d 10.200.2.0/24 -i ens1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 100.64.10.3/32 -d 10.200.2.0/24 -i ens1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 100.64.10.4/32 -d 10.200.2.0/24 -i ens1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 10.200.1.0/24 -d 10.200.2.0/24 -i ens1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 10.200.3.0/24 -d 10.200.2.0/24 -i ens1f0 -o docker0 -j ACCEPT
-A RDGGEN-CONTAINERS -s 10.200.4.0/24 -d 10.200.2.0/24 -i ens1f0 -o docker0 -j ACCEPT
COMMIT
EOF
iptables -C DOCKER-USER -j RDGGEN-CONTAINERS 2>/dev/null || iptables -I DOCKER-USER 1 -j RDGGEN-CONTAINERS

# 3. Routes: each other host's container subnet via its data address. Never 10.200.2.0/24,
#    docker0's own subnet. `replace` is idempotent where `add` fails on a re-run.
ip -force -batch - <<'EOF'
route replace 10.200.1.0/24 via 100.64.10.1 dev ens1f0  # gpu1
route replace 10.200.3.0/24 via 100.64.10.3 dev ens1f0  # gpu3
route replace 10.200.4.0/24 via 100.64.10.4 dev ens1f0  # gpu4
EOF
