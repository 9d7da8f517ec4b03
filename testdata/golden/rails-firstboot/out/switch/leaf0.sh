#!/bin/sh
# rdggen: switch leaf0 of cluster firstboot (inventory inventory.yaml)
# SN5600, Cumulus Linux 5.9.1: lossless RoCE with NVUE's `qos roce` profile (mode lossless: trust PCP and DSCP,
# switch priority 3 -> traffic class 3 with PFC and ECN, 6 -> 6 strict for CNPs: the hosts' DSCP 26 and 48).
# Data ports swp1-2 (2): in bridge br_default, access VLAN 1 (rail r in VLAN r+1), link up, MTU 9216 (Cumulus's default, written so that a lowered port shows).
# Each data port and uplink is described with what is cabled to it (VM@ESXi host/PF:rail, or far switch:port).
# Fabric leaf: AS 65101, loopback and router-id 10.10.10.2; eBGP on 1 uplink(s) (1 unnumbered, 0 numbered /31 to ONYX peers), MTU 9216,
# BFD on each session (detect-multiplier 3, 300 ms min rx/tx):
#   swp64->spine swp1.
# Rail 0: gateway 10.20.0.254/24 of the (leaf, rail) subnet 10.20.0.0/24 on vlan1, its ports in VLAN 1;
# a static route to each of the 2 hosts' container subnets whose rail 0 is here, via its rail 0 address;
# the loopback, each rail's subnet and the container subnets advertised with BGP network statements.
# rdggen owns only these paths; the switch's other configuration is left as it is.
# Run on the switch as a user allowed to apply (e.g. cumulus); `nv config apply` shows the change and asks first.
# Or run: rdggen apply --target switch, which changes only what differs, through the NVUE REST API.
set -e
nv set bridge domain br_default vlan 1
nv set interface lo ip address 10.10.10.2/32
nv set interface swp1 description node1@esx-1.example/vmnic4:rail0
nv set interface swp1-2 bridge domain br_default access 1
nv set interface swp1-2 link mtu 9216
nv set interface swp1-2 link state up
nv set interface swp1-2 type swp
nv set interface swp2 description node2@esx-2.example/vmnic4:rail0
nv set interface swp64 description spine:swp1
nv set interface swp64 link mtu 9216
nv set interface swp64 link state up
nv set interface swp64 type swp
nv set interface vlan1 ip address 10.20.0.254/24
nv set interface vlan1 type svi
nv set interface vlan1 vlan 1
nv set qos roce enable on
nv set qos roce mode lossless
nv set router bgp autonomous-system 65101
nv set router bgp router-id 10.10.10.2
nv set service lldp
nv set system hostname leaf0
nv set vrf default router bgp address-family ipv4-unicast network 10.10.10.2/32
nv set vrf default router bgp address-family ipv4-unicast network 10.20.0.0/24
nv set vrf default router bgp address-family ipv4-unicast network 172.16.11.0/24
nv set vrf default router bgp address-family ipv4-unicast network 172.16.12.0/24
nv set vrf default router bgp neighbor swp64 bfd detect-multiplier 3
nv set vrf default router bgp neighbor swp64 bfd enable on
nv set vrf default router bgp neighbor swp64 bfd min-rx-interval 300
nv set vrf default router bgp neighbor swp64 bfd min-tx-interval 300
nv set vrf default router bgp neighbor swp64 remote-as external
nv set vrf default router bgp neighbor swp64 type unnumbered
nv set vrf default router static 172.16.11.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.11.0/24 via 10.20.0.11 type ipv4-address
nv set vrf default router static 172.16.12.0/24 address-family ipv4-unicast
nv set vrf default router static 172.16.12.0/24 via 10.20.0.12 type ipv4-address
nv config diff
nv config apply
nv config save
