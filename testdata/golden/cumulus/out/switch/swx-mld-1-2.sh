#!/bin/sh
# rdggen: switch swx-mld-1-2 of cluster clx-mld (inventory inventory.yaml)
# SN2700, Cumulus Linux 5.9.1: lossless RoCE with NVUE's `qos roce` profile (mode lossless: trust PCP and DSCP,
# switch priority 3 -> traffic class 3 with PFC and ECN, 6 -> 6 strict for CNPs: the hosts' DSCP 26 and 48).
# Data ports swp1-8 (8): in bridge br_default, access VLAN 1, link up, MTU 9216 (Cumulus's default, written so that a lowered port shows).
# Each data port and uplink is described with what is cabled to it (VM@ESXi host/PF, or far switch:port).
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
nv set qos roce enable on
nv set qos roce mode lossless
nv set service lldp
nv set system hostname swx-mld-1-2
nv config diff
nv config apply
nv config save
