#!/bin/sh
# rdggen: switch leaf3 of cluster rails (inventory inventory.yaml)
# SN5600, Cumulus Linux 5.9.1: lossless RoCE with NVUE's `qos roce` profile (mode lossless: trust PCP and DSCP,
# switch priority 3 -> traffic class 3 with PFC and ECN, 6 -> 6 strict for CNPs: the hosts' DSCP 26 and 48).
# Data ports swp1s0,swp1s1,swp2s0,swp2s1 (4): in bridge br_default, access VLAN 4 (rail r in VLAN r+1), link up, MTU 9216 (Cumulus's default, written so that a lowered port shows).
# Split ports: swp1 2x (swp1s0-swp1s1), swp2 2x (swp2s0-swp2s1); a breakout resets the port's links while the switch applies it.
# Each data port and uplink is described with what is cabled to it (VM@ESXi host/PF:rail, or far switch:port).
# Fabric leaf: AS 65104, loopback and router-id 10.10.10.6; eBGP on 2 uplink(s) (2 unnumbered, 0 numbered /31 to ONYX peers), MTU 9216,
# BFD on each session (detect-multiplier 3, 300 ms min rx/tx):
#   swp63->spine1 swp4, swp64->spine2 swp4.
# Rail 3: gateway 10.0.3.254/24 of the (leaf, rail) subnet 10.0.3.0/24 on vlan4, its ports in VLAN 4;
# a static route to each of the 0 hosts' container subnets whose rail 0 is here, via its rail 0 address;
# the loopback, each rail's subnet and the container subnets advertised with BGP network statements.
# rdggen owns only these paths; the switch's other configuration is left as it is.
# Run on the switch as a user allowed to apply (e.g. cumulus); `nv config apply` shows the change and asks first.
# Or run: rdggen apply --target switch, which changes only what differs, through the NVUE REST API.
set -e
nv set bridge domain br_default vlan 4
nv set interface lo ip address 10.10.10.6/32
nv set interface swp1-2 link breakout 2x lanes-per-port 4
nv set interface swp1s0 description gpu1@esx-1.example/vmnic7:rail3
nv set interface swp1s0,swp1s1,swp2s0,swp2s1 bridge domain br_default access 4
nv set interface swp1s0,swp1s1,swp2s0,swp2s1 link mtu 9216
nv set interface swp1s0,swp1s1,swp2s0,swp2s1 link state up
nv set interface swp1s0,swp1s1,swp2s0,swp2s1 type swp
nv set interface swp1s1 description gpu2@esx-2.example/vmnic7:rail3
nv set interface swp2s0 description gpu3@esx-3.example/vmnic7:rail3
nv set interface swp2s1 description gpu4@esx-4.example/vmnic7:rail3
nv set interface swp63 description spine1:swp4
nv set interface swp63-64 link mtu 9216
nv set interface swp63-64 link state up
nv set interface swp63-64 type swp
nv set interface swp64 description spine2:swp4
nv set interface vlan4 ip address 10.0.3.254/24
nv set interface vlan4 type svi
nv set interface vlan4 vlan 4
nv set qos roce enable on
nv set qos roce mode lossless
nv set router bgp autonomous-system 65104
nv set router bgp router-id 10.10.10.6
nv set service lldp
nv set system hostname leaf3
nv set vrf default router bgp address-family ipv4-unicast network 10.0.3.0/24
nv set vrf default router bgp address-family ipv4-unicast network 10.10.10.6/32
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
nv config diff
nv config apply
nv config save
