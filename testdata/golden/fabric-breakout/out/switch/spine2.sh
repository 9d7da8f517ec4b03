#!/bin/sh
# rdggen: switch spine2 of cluster brk (inventory inventory.yaml)
# SN5600, Cumulus Linux 5.9.1: lossless RoCE with NVUE's `qos roce` profile (mode lossless: trust PCP and DSCP,
# switch priority 3 -> traffic class 3 with PFC and ECN, 6 -> 6 strict for CNPs: the hosts' DSCP 26 and 48).
# Data ports none (0): in bridge br_default, access VLAN 1, link up, MTU 9216 (Cumulus's default, written so that a lowered port shows).
# Each data port and uplink is described with what is cabled to it (VM@ESXi host/PF, or far switch:port).
# Fabric spine: AS 65100, loopback and router-id 10.10.10.2; eBGP on 3 uplink(s) (2 unnumbered, 1 numbered /31 to ONYX peers), MTU 9216,
# BFD on each session (detect-multiplier 3, 300 ms min rx/tx):
#   swp1->leaf1 swp64, swp2->leaf2 swp64, swp3->leaf3 1/32.
# The loopback advertised with a BGP network statement.
# rdggen owns only these paths; the switch's other configuration is left as it is.
# Run on the switch as a user allowed to apply (e.g. cumulus); `nv config apply` shows the change and asks first.
# Or run: rdggen apply --target switch, which changes only what differs, through the NVUE REST API.
set -e
nv set interface lo ip address 10.10.10.2/32
nv set interface swp1 description leaf1:swp64
nv set interface swp1-2 link mtu 9216
nv set interface swp1-2 link state up
nv set interface swp1-2 type swp
nv set interface swp2 description leaf2:swp64
nv set interface swp3 description leaf3:1/32
nv set interface swp3 ip address 10.254.0.11/31
nv set interface swp3 link mtu 9216
nv set interface swp3 link state up
nv set interface swp3 type swp
nv set qos roce enable on
nv set qos roce mode lossless
nv set router bgp autonomous-system 65100
nv set router bgp router-id 10.10.10.2
nv set service lldp
nv set system hostname spine2
nv set vrf default router bgp address-family ipv4-unicast network 10.10.10.2/32
nv set vrf default router bgp neighbor 10.254.0.10 bfd detect-multiplier 3
nv set vrf default router bgp neighbor 10.254.0.10 bfd enable on
nv set vrf default router bgp neighbor 10.254.0.10 bfd min-rx-interval 300
nv set vrf default router bgp neighbor 10.254.0.10 bfd min-tx-interval 300
nv set vrf default router bgp neighbor 10.254.0.10 remote-as 65103
nv set vrf default router bgp neighbor swp1 bfd detect-multiplier 3
nv set vrf default router bgp neighbor swp1 bfd enable on
nv set vrf default router bgp neighbor swp1 bfd min-rx-interval 300
nv set vrf default router bgp neighbor swp1 bfd min-tx-interval 300
nv set vrf default router bgp neighbor swp1 remote-as external
nv set vrf default router bgp neighbor swp1 type unnumbered
nv set vrf default router bgp neighbor swp2 bfd detect-multiplier 3
nv set vrf default router bgp neighbor swp2 bfd enable on
nv set vrf default router bgp neighbor swp2 bfd min-rx-interval 300
nv set vrf default router bgp neighbor swp2 bfd min-tx-interval 300
nv set vrf default router bgp neighbor swp2 remote-as external
nv set vrf default router bgp neighbor swp2 type unnumbered
nv config diff
nv config apply
nv config save
