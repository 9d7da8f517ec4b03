#!/bin/sh
# rdggen: switch leaf2 of cluster fab (inventory inventory.yaml)
# SN5600, Cumulus Linux 5.9.1: lossless RoCE with NVUE's `qos roce` profile (mode lossless: trust PCP and DSCP,
# switch priority 3 -> traffic class 3 with PFC and ECN, 6 -> 6 strict for CNPs: the hosts' DSCP 26 and 48).
# Data ports swp1s0,swp1s1 (2): in bridge br_default, access VLAN 1, link up, MTU 9216 (Cumulus's default, written so that a lowered port shows).
# Split ports: swp1 2x (swp1s0-swp1s1); a breakout resets the port's links while the switch applies it.
# Each data port and uplink is described with what is cabled to it (VM@ESXi host/PF, or far switch:port).
# Fabric leaf: AS 65102, loopback and router-id 10.10.10.4; eBGP on 2 uplink(s) (2 unnumbered, 0 numbered /31 to ONYX peers), MTU 9216,
# BFD on each session (detect-multiplier 3, 300 ms min rx/tx):
#   swp63->spine1 swp2, swp64->spine2 swp2.
# Gateway 10.1.2.254/24 of the hosts' data subnet 10.1.2.0/24 on vlan1; a static route to each of the 2 hosts' container subnets via its data address;
# the loopback, the subnet and the container subnets advertised with BGP network statements.
# rdggen owns only these paths; the switch's other configuration is left as it is.
# Run on the switch as a user allowed to apply (e.g. cumulus); `nv config apply` shows the change and asks first.
# Or run: rdggen apply --target switch, which changes only what differs, through the NVUE REST API.
set -e
nv set bridge domain br_default vlan 1
nv set interface lo ip address 10.10.10.4/32
nv set interface swp1 link breakout 2x lanes-per-port 4
nv set interface swp1s0 description h21@esx-21.example/vmnic4
nv set interface swp1s0,swp1s1 bridge domain br_default access 1
nv set interface swp1s0,swp1s1 link mtu 9216
nv set interface swp1s0,swp1s1 link state up
nv set interface swp1s0,swp1s1 type swp
nv set interface swp1s1 description h22@esx-22.example/vmnic4
nv set interface swp63 description spine1:swp2
nv set interface swp63-64 link mtu 9216
nv set interface swp63-64 link state up
nv set interface swp63-64 type swp
nv set interface swp64 description spine2:swp2
nv set interface vlan1 ip address 10.1.2.254/24
nv set interface vlan1 type svi
nv set interface vlan1 vlan 1
nv set qos roce enable on
nv set qos roce mode lossless
nv set router bgp autonomous-system 65102
nv set router bgp router-id 10.10.10.4
nv set service lldp
nv set system hostname leaf2
nv set vrf default router bgp address-family ipv4-unicast network 10.1.2.0/24
nv set vrf default router bgp address-family ipv4-unicast network 10.10.10.4/32
nv set vrf default router bgp address-family ipv4-unicast network 172.16.21.0/24
nv set vrf default router bgp address-family ipv4-unicast network 172.16.22.0/24
nv set vrf default router bgp neighbor swp63 bfd detect-multiplier 3
nv set vrf default router bgp neighbor swp63 bfd enable on
nv set vrf default router bgp neighbor swp63 bfd min-rx-interval 300
nv set vrf default router bgp neighbor swp63 bfd min-tx-interval 300
nv set vrf default router bgp neighbor swp63 remote-as external
nv set vrf default router bgp neighbor swp63 type unnumbered
nv set vrf default router bgp neighbor swp64 bfd detect-multiplier 3
nv set vrf default router bgp neighbor swp64 bfd enable on
nv set vrf default router bgp neighbor swp64 bfd min-rx-interval 300
nv set vrf default router bgp neighbor swp64 bfd min-tx-interval 300
nv set vrf default router bgp neighbor swp64 remote-as external
nv set vrf default router bgp neighbor swp64 type unnumbered
nv set vrf default router static 172.16.21.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.21.0/24 via 10.1.2.21 type ipv4-address
nv set vrf default router static 172.16.22.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.22.0/24 via 10.1.2.22 type ipv4-address
nv config diff
nv config apply
nv config save
