package onyxapply

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// bigSeed is unrelated configuration for a 64-port switch that the
// simulator renders as about 2,000 running-config lines: per-port
// descriptions, MTUs and traffic-class 0 RED thresholds that do not merge
// into ranges, 1,000 named VLANs, static routes, SNMP, NTP and users.
func bigSeed() []string {
	var s []string
	for p := 1; p <= 64; p++ {
		s = append(s,
			fmt.Sprintf("interface ethernet 1/%d description rack-%02d-server-%02d", p, p/8, p%8),
			fmt.Sprintf("interface ethernet 1/%d mtu %d force", p, 9000+p%2*216),
			fmt.Sprintf("interface ethernet 1/%d traffic-class 0 congestion-control red minimum-absolute %d maximum-absolute 2000", p, 100+p%2),
		)
	}
	s = append(s, "vlan 2-1001")
	for v := 2; v <= 1001; v++ {
		s = append(s, fmt.Sprintf("vlan %d name tenant-%d", v, v))
	}
	for i := 0; i < 717; i++ {
		s = append(s, fmt.Sprintf("ip route 10.%d.%d.0/24 192.0.2.254", i/256, i%256))
	}
	for i := 0; i < 50; i++ {
		s = append(s, fmt.Sprintf("snmp-server community ro-%d ro", i))
	}
	for i := 0; i < 20; i++ {
		s = append(s, fmt.Sprintf("ntp server 192.0.2.%d", i+1), fmt.Sprintf("username user%d password 0 pw%d", i, i))
	}
	return s
}

// commandLines counts the command lines of a running-config (no comments,
// banners, blank lines or the prefix-mode wrapper).
func commandLines(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasSuffix(l, "cli default prefix-modes enable") {
			n++
		}
	}
	return n
}

// BenchmarkApply64Ports is plan + apply (connect, read and parse the
// running-config, diff, backup, push, verify, save) against the simulator
// for an SN4600C (64 ports) carrying 2,000 lines of unrelated config.
// "first" starts from that switch without the RoCE config; "second" is the
// idempotent re-run, which must send nothing.
func BenchmarkApply64Ports(b *testing.B) {
	newSwitch := func(b *testing.B) *rig {
		b.Helper()
		inv := loadInv(b, [3]string{"spine-1", "SN4600C", "3.6.8190"})
		r := newRig(b, inv, onyxsim.Options{Seed: bigSeed()})
		if n := commandLines(r.sims[0].RunningConfig()); n != 2000+1 { // + hostname
			b.Fatalf("unrelated running-config has %d command lines, want 2000 + hostname", n)
		}
		return r
	}
	b.Run("first", func(b *testing.B) {
		var sent int
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			r := newSwitch(b)
			b.StartTimer()
			res, err := r.run(b)
			if err != nil {
				b.Fatal(err)
			}
			sent = res[0].Sent
			b.StopTimer()
			if got := len(r.sims[0].Received()); got != sent || r.sims[0].Saves() != 1 {
				b.Fatalf("switch received %d, result %d, saves %d", got, sent, r.sims[0].Saves())
			}
			r.sims[0].Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(sent), "cmds/op")
	})
	b.Run("second", func(b *testing.B) {
		r := newSwitch(b)
		if _, err := r.run(b); err != nil {
			b.Fatal(err)
		}
		var sent int
		b.ReportAllocs()
		for b.Loop() {
			res, err := r.run(b)
			if err != nil {
				b.Fatal(err)
			}
			sent = res[0].Sent + len(r.sims[0].Received())
		}
		if sent != 0 {
			b.Fatalf("second apply sent %d command(s)", sent)
		}
		b.ReportMetric(float64(sent), "cmds/op")
		b.ReportMetric(float64(commandLines(r.sims[0].RunningConfig())), "config-lines")
	})
}

// BenchmarkApplyRouted4096 is apply against the simulator for the routed
// pool at 4,096 hosts on one SN4600C (4,096 static routes and the QoS
// template): "first" from a clean switch (set up untimed), "noop" the
// re-run that sends nothing, and "first/batch=1" the same first apply with
// every command on its own (the push before blocks). Metrics: CLI round
// trips as the client counts them (Result.RoundTrips) and as the switch
// does (prompts at which it waited for input), commands sent. The rtt=5ms
// variants add 5 ms per round trip at the switch.
func BenchmarkApplyRouted4096(b *testing.B) {
	inv := routedPool(b, 4096)
	first := func(batch int, rtt time.Duration) func(b *testing.B) {
		return func(b *testing.B) {
			var trips, waits, sent int
			for b.Loop() {
				b.StopTimer()
				r := newRig(b, inv, onyxsim.Options{Latency: rtt})
				r.opts.Batch = batch
				b.StartTimer()
				res, err := r.run(b)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				trips, waits, sent = res[0].RoundTrips, r.sims[0].Waits(), res[0].Sent
				if !res[0].Saved || len(r.sims[0].Routes()) != 4096 {
					b.Fatalf("saved %v, %d routes", res[0].Saved, len(r.sims[0].Routes()))
				}
				r.sims[0].Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(trips), "roundtrips")
			b.ReportMetric(float64(waits), "switch-waits")
			b.ReportMetric(float64(sent), "cmds/op")
		}
	}
	b.Run("first", first(0, 0))
	b.Run("first/batch=1", first(1, 0))
	// A management network with 5 ms per round trip (the simulator waits
	// that long before each prompt it had to wait for).
	b.Run("first/rtt=5ms", first(0, 5*time.Millisecond))
	b.Run("first/batch=1/rtt=5ms", first(1, 5*time.Millisecond))
	b.Run("noop", func(b *testing.B) {
		r := newRig(b, inv)
		if _, err := r.run(b); err != nil {
			b.Fatal(err)
		}
		var trips, waits, sent int
		for b.Loop() {
			res, err := r.run(b)
			if err != nil {
				b.Fatal(err)
			}
			trips, waits, sent = res[0].RoundTrips, r.sims[0].Waits(), res[0].Sent+len(r.sims[0].Received())
		}
		if sent != 0 {
			b.Fatalf("no-op apply sent %d command(s)", sent)
		}
		b.ReportMetric(float64(trips), "roundtrips")
		b.ReportMetric(float64(waits), "switch-waits")
	})
}
