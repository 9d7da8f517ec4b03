#!/bin/sh
# rdggen: switch swx-mld-1-2 of cluster clx-mld (inventory inventory.yaml)
# SN2700, Cumulus Linux 5.15.0: lossless RoCE with NVUE's `qos roce` profile (mode lossless: trust PCP and DSCP,
# switch priority 3 -> traffic class 3 with PFC and ECN, 6 -> 6 strict for CNPs: the hosts' DSCP 26 and 48).
# Data ports swp1-8 (8): in bridge br_default, access VLAN 1, link up, MTU 9216 (Cumulus's default, written so that a lowered port shows).
# Each data port and uplink is described with what is cabled to it (VM@ESXi host/PF, or far switch:port).
# Routed container pool (docker.routing: switch): gateway 31.31.31.254/24 on interface vlan1,
# and a static route in the default VRF to each of the 8 hosts' container subnets in 172.16.0.0/16 via the host's data address.
# rdggen owns only these paths; the switch's other configuration is left as it is.
# Run on the switch as a user allowed to apply (e.g. cumulus); `nv config apply` shows the change and asks first.
# Or run: rdggen apply --target switch, which changes only what differs, through the NVUE REST API.
set -e
nv set bridge domain br_default vlan 1
nv set interface swp1 description clx-mld-41@esx-41.example/vmnic4
nv set interface swp1-8 bridge domain br_default access 1
nv set interface swp1-8 link mtu 9216
nv set interface swp1-8 link state up
nv set interface swp1-8 type swp
nv set interface swp2 description clx-mld-42@esx-42.example/vmnic4
nv set interface swp3 description clx-mld-43@esx-43.example/vmnic4
nv set interface swp4 description clx-mld-44@esx-44.example/vmnic4
nv set interface swp5 description clx-mld-45@esx-45.example/vmnic4
nv set interface swp6 description clx-mld-46@esx-46.example/vmnic4
nv set interface swp7 description clx-mld-47@esx-47.example/vmnic4
nv set interface swp8 description clx-mld-48@esx-48.example/vmnic4
nv set interface vlan1 ipv4 address 31.31.31.254/24
nv set interface vlan1 type svi
nv set interface vlan1 vlan 1
nv set qos roce mode lossless
nv set qos roce state enabled
nv set system hostname swx-mld-1-2
nv set system lldp
nv set vrf default router static 172.16.41.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.41.0/24 via 31.31.31.41 type ipv4-address
nv set vrf default router static 172.16.42.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.42.0/24 via 31.31.31.42 type ipv4-address
nv set vrf default router static 172.16.43.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.43.0/24 via 31.31.31.43 type ipv4-address
nv set vrf default router static 172.16.44.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.44.0/24 via 31.31.31.44 type ipv4-address
nv set vrf default router static 172.16.45.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.45.0/24 via 31.31.31.45 type ipv4-address
nv set vrf default router static 172.16.46.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.46.0/24 via 31.31.31.46 type ipv4-address
nv set vrf default router static 172.16.47.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.47.0/24 via 31.31.31.47 type ipv4-address
nv set vrf default router static 172.16.48.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.48.0/24 via 31.31.31.48 type ipv4-address
nv config diff
nv config apply
nv config save
