package netnstest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRootVeths(t *testing.T) {
	out := `1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
5: rdgm1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000\    link/ether 1a:2b:3c:4d:5e:6f brd ff:ff:ff:ff:ff:ff
7: rdg1m1@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue master rdgm1 state UP mode DEFAULT group default qlen 1000\    link/ether 1a:2b:3c:4d:5e:70 brd ff:ff:ff:ff:ff:ff link-netns rdg1h1
8: rdg1m12@if2: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 1000\    link/ether 1a:2b:3c:4d:5e:71 brd ff:ff:ff:ff:ff:ff
9: rdg11m1@if2: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 1000\    link/ether 1a:2b:3c:4d:5e:72 brd ff:ff:ff:ff:ff:ff
10: rdg1mx: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 1000\    link/ether 1a:2b:3c:4d:5e:73 brd ff:ff:ff:ff:ff:ff
`
	if diff := cmp.Diff([]string{"rdg1m1", "rdg1m12"}, rootVeths(out, 1)); diff != "" {
		t.Errorf("slot 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rdg11m1"}, rootVeths(out, 11)); diff != "" {
		t.Errorf("slot 11 (-want +got):\n%s", diff)
	}
}
