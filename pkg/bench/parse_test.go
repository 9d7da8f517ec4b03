package bench

import (
	"math"
	"net/netip"
	"os"
	"strings"
	"testing"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.005 }

// TestParsePerftestDeepOps reads every header field of DeepOps' RoCE run
// (rdma_cm, IPv4-mapped GIDs) and its row behind a CPU-frequency warning.
func TestParsePerftestDeepOps(t *testing.T) {
	r, err := ParsePerftest(read(t, "perftest-deepops-roce-gbits.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Test != "RDMA_Write BW Test" || r.Verb != "write" || r.Bidirectional || r.Server {
		t.Errorf("title %q verb %q bidir %v server %v", r.Test, r.Verb, r.Bidirectional, r.Server)
	}
	if r.Device != "mlx5_0" || r.QPs != 1 || r.Transport != "IB" || r.Connection != "RC" || r.MTU != 4096 ||
		r.LinkType != "Ethernet" || r.GIDIndex != 3 || !r.RDMACM || r.CUDA {
		t.Errorf("header: %+v", r)
	}
	if len(r.Local) != 1 || len(r.Remote) != 1 || r.Local[0].IPv4 != netip.MustParseAddr("10.10.11.12") ||
		r.Remote[0].IPv4 != netip.MustParseAddr("10.10.11.11") || r.Local[0].QPN != "0x025d" {
		t.Errorf("endpoints: %+v %+v", r.Local, r.Remote)
	}
	if r.Unit != "Gb/sec" || len(r.Rows) != 1 || !r.Closed {
		t.Fatalf("table: unit %q rows %v closed %v", r.Unit, r.Rows, r.Closed)
	}
	if row := r.Rows[0]; row.Bytes != 65536 || row.Iterations != 5000 || row.PeakGbps != 92.42 || row.AvgGbps != 92.40 ||
		row.MsgRateMpps != 0.176230 || row.Line != 21 {
		t.Errorf("row %+v", row)
	}
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "Conflicting CPU frequency values detected: 1200.535000 != 1251.336000") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// TestPerftestMBIsMebibyte: perftest's [MB/sec] and [MiB/sec] are 2^20
// bytes per second (print_report_bw divides by 0x100000), so 23240.68 MB/sec
// is 194.96 Gb/s — with 10^6 bytes it would be 185.93, and a healthy 100 GbE
// run at 11030.45 MiB/s (92.53 Gb/s) would fail the 90 Gb/s line at 88.24.
func TestPerftestMBIsMebibyte(t *testing.T) {
	r, err := ParsePerftest(read(t, "perftest-superbench-loopback-mb.txt"))
	if err != nil {
		t.Fatal(err)
	}
	last, _ := r.Largest()
	if r.Unit != "MB/sec" || last.Bytes != 8388608 || !near(last.AvgGbps, 23240.68*1048576*8/1e9) || !near(last.AvgGbps, 194.96) {
		t.Errorf("unit %q largest %+v", r.Unit, last)
	}
	// Both sides' output interleaved: the header twice, the rows once, the
	// final row repeated after the closing line (not a second row).
	if len(r.Rows) != 23 || r.Rows[0].Bytes != 2 || !r.Server || r.LinkType != "IB" || r.GIDIndex != -1 || len(r.Local) != 2 {
		t.Errorf("rows %d first %+v server %v link %q gid %d local %d", len(r.Rows), r.Rows[0], r.Server, r.LinkType, r.GIDIndex, len(r.Local))
	}
	for _, c := range []struct {
		unit string
		v    float64
		want float64
	}{{"MiB/sec", 11030.45, 92.53}, {"MB/sec", 11030.45, 92.53}, {"Gb/sec", 92.40, 92.40}} {
		got, ok := toGbps(c.v, c.unit)
		if !ok || !near(got, c.want) {
			t.Errorf("toGbps(%v, %s) = %v, want %v", c.v, c.unit, got, c.want)
		}
	}
	if _, ok := toGbps(1, "Kb/sec"); ok {
		t.Error("an unknown unit converts")
	}
}

// TestParsePerftestFailures: failure messages, the CUDA preamble, the
// older "Gid index" and tab-separated fields.
func TestParsePerftestFailures(t *testing.T) {
	r, err := ParsePerftest(read(t, "perftest-126-cuda-mr-fail.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.CUDA || r.Verb != "write" || len(r.Failures) != 6 || r.Failures[0] != "Couldn't allocate MR" ||
		!strings.Contains(r.Command, "--use_cuda=0 192.168.111.1") {
		t.Errorf("cuda %v verb %q failures %q command %q", r.CUDA, r.Verb, r.Failures, r.Command)
	}
	s, err := ParsePerftest(read(t, "perftest-softiwarp-send-mr-fail.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Test != "Send BW Test" || s.Verb != "send" || s.Transport != "IW" || s.Device != "siw_ens33" || s.GIDIndex != 0 ||
		s.MTU != 1024 || s.CUDA || len(s.Failures) != 4 {
		t.Errorf("%+v", s)
	}
	p, err := ParsePerftest(read(t, "perftest-273-postlist-8b.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Test != "RDMA_Write Post List BW Test" || p.Device != "ib0" || p.GIDIndex != 2 || len(p.Rows) != 1 ||
		p.Rows[0].AvgGbps != 0.48 || p.Rows[0].MsgRateMpps != 7.498617 {
		t.Errorf("%+v", p)
	}
	if _, err := ParsePerftest(read(t, "nccltests-a3mega-newformat.txt")); err == nil {
		t.Error("nccl-tests output read as perftest")
	}
}

// TestParsePerftestVariants: per-port and QoS tables, a bidirectional run,
// a "No IB devices" run — formats from perftest's RESULT_FMT_* macros.
func TestParsePerftestVariants(t *testing.T) {
	qos := " #bytes    #sl      #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n" +
		" 65536      3        5000             92.10              91.90              0.175\n" +
		"---------------------------------------------------------------------------------------\n"
	r, err := ParsePerftest([]byte(qos))
	if err != nil || len(r.Rows) != 1 || r.Rows[0].AvgGbps != 91.90 || r.Rows[0].Iterations != 5000 || !r.Closed {
		t.Errorf("QoS table: %v %+v", err, r)
	}
	bidir := "                    RDMA_Write Bidirectional BW Test\n"
	if r, err := ParsePerftest([]byte(bidir)); err != nil || !r.Bidirectional || r.Verb != "write" {
		t.Errorf("bidirectional: %v %+v", err, r)
	}
	if pl := PerftestPassLine(100, true); pl.Value != 180 {
		t.Errorf("bidirectional pass line %v", pl.Value)
	}
	nodev := "$ ib_write_bw -d mlx5_3 10.0.0.1\nIB device mlx5_3 not found\n Unable to find the Infiniband/RoCE device\n"
	if r, err := ParsePerftest([]byte(nodev)); err != nil || len(r.Failures) != 1 || r.Verb != "write" {
		t.Errorf("no device: %v %+v", err, r)
	}
}

// TestParseNCCLTestsNewFormat: the 2025 header (Group, [domain:bus:dev]),
// root and #wrong columns, text before the output.
func TestParseNCCLTestsNewFormat(t *testing.T) {
	nt, err := ParseNCCLTests(read(t, "nccltests-a3mega-newformat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if nt.Program != "all_reduce_perf" || nt.NThread != 1 || nt.NGPUs != 1 || nt.MinBytes != 8 || nt.MaxBytes != 8589934592 ||
		nt.Validation != 1 || len(nt.Ranks) != 16 || !nt.Header || !nt.Root || !nt.Redop || nt.WrongColumn != "#wrong" {
		t.Errorf("%+v", nt)
	}
	if r := nt.Ranks[8]; r.Rank != 8 || r.Group != 0 || r.PID != 6733 || r.Host != "ztan-mig-gq73" || r.Device != 0 ||
		r.Bus != "0000:04:00" || r.Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("rank 8 %+v", r)
	}
	if hs := nt.Hosts(); len(hs) != 2 {
		t.Errorf("hosts %v", hs)
	}
	if len(nt.Rows) != 31 || nt.Dropped != 0 || !nt.Footer || nt.OutOfBounds != 0 || !nt.HasAvg || nt.AvgBusBW != 70.742 || nt.AvgGate != "" {
		t.Errorf("rows %d dropped %d footer %v oob %d avg %v", len(nt.Rows), nt.Dropped, nt.Footer, nt.OutOfBounds, nt.AvgBusBW)
	}
	last := nt.Rows[30]
	if last.Bytes != 8589934592 || last.Count != 2147483648 || last.Type != "float" || last.Redop != "sum" || last.Root != -1 ||
		last.Out.TimeUS != 47535 || last.Out.AlgBW != 180.71 || last.Out.BusBW != 338.82 || last.Out.Wrong != 0 ||
		last.In.BusBW != 337.35 || last.In.Wrong != 0 || last.Out.MaxError != -1 {
		t.Errorf("last row %+v", last)
	}
	if w, any := nt.Wrong(); w != 0 || !any {
		t.Errorf("wrong %d %v", w, any)
	}
	if !nt.Log.Empty() {
		t.Errorf("log %+v", nt.Log)
	}
}

// TestParseNCCLTestsOldFormats: the "error" column without root (DeepOps),
// root without redop and N/A (broadcast, validation off), lines without
// their '#' (a paste), a table with no header.
func TestParseNCCLTestsOldFormats(t *testing.T) {
	d, err := ParseNCCLTests(read(t, "nccltests-deepops-roce-2x100g.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Root || !d.Redop || d.WrongColumn != "error" || len(d.Rows) != 29 || d.Rows[0].Out.MaxError != 2e-07 || d.Rows[0].Out.Wrong != -1 ||
		d.MaxBytes != 0 || d.Validation != -1 {
		t.Errorf("deepops: %+v", d)
	}
	b, err := ParseNCCLTests(read(t, "nccltests-82-broadcast-no-verbs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !b.Root || b.Redop || b.Program != "broadcast_perf" || b.Validation != 0 || len(b.Ranks) != 2 || b.Ranks[1].Host != "v100-gpu-5" ||
		b.Ranks[1].Bus != "0x00" || len(b.Rows) != 1 || b.Rows[0].Root != 0 || b.Rows[0].Out.MaxError != -1 || b.Footer {
		t.Errorf("broadcast: %+v", b)
	}
	if b.Log.Version != "2.9.6+cuda11.2" || len(b.Log.NoVerbs) != 2 || b.Log.NoVerbs[1].Host != "v100-gpu-5" {
		t.Errorf("broadcast log: %+v", b.Log)
	}
	if v, ok := b.Log.EnvValue("NCCL_IB_DISABLE"); !ok || v != "1" {
		t.Errorf("NCCL_IB_DISABLE from the mpirun line: %q %v", v, ok)
	}
	g, err := ParseNCCLTests(read(t, "nccltests-37-out-of-bounds.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Program != "all_gather_perf" || g.Root || g.Redop || len(g.Rows) != 1 || g.Rows[0].Out.MaxError != 1 || g.OutOfBounds != 2 ||
		g.AvgBusBW != 128.942 {
		t.Errorf("all_gather: %+v", g)
	}
	h, err := ParseNCCLTests(read(t, "nccltests-119-tail-below-1g.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Header || len(h.Rows) != 6 || h.Rows[5].Bytes != 133169160 || h.Rows[5].Out.BusBW != 95.74 || h.Rows[5].Redop != "sum" || !h.Footer {
		t.Errorf("headerless: %+v", h)
	}
	s, err := ParseNCCLTests(read(t, "nccltests-superbench-single-node.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rows) != 34 || s.Rows[0].Bytes != 0 || s.Rows[1].Bytes != 0 || s.Rows[0].Out.Wrong != -1 || s.Validation != 0 {
		t.Errorf("superbench: %d rows %+v", len(s.Rows), s.Rows[0])
	}
	n, err := ParseNCCLTests(read(t, "nccltests-spark103-version-header.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Version != "2.20.0" || n.Program != "all_reduce_perf" || n.MinBytes != 8192 || len(n.Rows) != 4 || n.Footer || n.Concluded {
		t.Errorf("spark: %+v", n)
	}
	c, err := ParseNCCLTests(read(t, "nccltests-rccl2078-concluded.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Concluded || !c.Footer || len(c.Rows) != 4 {
		t.Errorf("rccl: %+v", c)
	}
}

// TestParseNCCLTestsGate: NCCL_TESTS_MIN_BW's OK|FAILED after the average
// (nccl-tests src/util.cu writeResultFooter: "# %-20s : %g %s"), Open MPI's
// --tag-output prefix, per-iteration columns. No public output with the
// gate was found, so the lines are built from the format strings.
func TestParseNCCLTestsGate(t *testing.T) {
	head := "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	row := "[1,0]<stdout>:  1073741824     268435456     float     sum      -1    88429   12.14   22.77      0    87932   12.21   22.90      0\n"
	for _, gate := range []string{"OK", "FAILED"} {
		out := head + row + "[1,0]<stdout>:# Out of bounds values : 0 OK\n[1,0]<stdout>:# Avg bus bandwidth    : 22.77 " + gate + "\n"
		nt, err := ParseNCCLTests([]byte(out))
		if err != nil || nt.AvgGate != gate || len(nt.Rows) != 1 || nt.Rows[0].Out.BusBW != 22.77 {
			t.Errorf("%s: %v %+v", gate, err, nt)
		}
	}
	iter := "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%\n" +
		"  1073741824     268435456     float     sum      -1    88429   12.14   22.77       0    88000    89000    88900      0.4    87932   12.21   22.90       0    87000    88000    87900      0.3\n"
	nt, err := ParseNCCLTests([]byte(iter))
	if err != nil || len(nt.Rows) != 1 || nt.Rows[0].Out.BusBW != 22.77 || nt.Rows[0].In.BusBW != 22.90 || nt.Rows[0].In.TimeUS != 87932 {
		t.Errorf("per-iteration columns: %v %+v", err, nt)
	}
}

// TestParseNCCLLog reads the lines of the NCCL log formats.
func TestParseNCCLLog(t *testing.T) {
	l := ParseNCCLLog(read(t, "nccllog-660-gdrdma-baremetal.txt"))
	if l.Lines != 11 || len(l.Hosts) != 2 || len(l.Channels) != 5 || len(l.NetChannels()) != 3 {
		t.Fatalf("%+v", l)
	}
	c := l.Channels[0]
	if c.Host != "instance-ubm6ko9y" || c.Channel != 2 || c.From != 13 || c.FromBus != "b2000" || c.To != 4 || c.ToBus != "b1000" ||
		c.Dir != "receive" || c.Via != "NET/IB/0/GDRDMA" || c.Net != "IB" || c.NetDev != 0 || !c.GDR || c.LocalRank() != 4 || c.Line != 1 {
		t.Errorf("channel %+v", c)
	}
	if p := l.Channels[2]; p.Net != "" || p.GDR || p.Via != "P2P/direct pointer" || p.LocalRank() != 3 {
		t.Errorf("P2P channel %+v", p)
	}
	old := ParseNCCLLog(read(t, "nccllog-4921-no-gdrdma.txt"))
	if len(old.Channels) != 1 || old.Channels[0].Channel != 0 || old.Channels[0].From != 7 || old.Channels[0].FromBus != "7000" ||
		old.Channels[0].GDR || old.Channels[0].Net != "IB" || old.Channels[0].Host != "" {
		t.Errorf("old ring line %+v", old.Channels)
	}
	g := ParseNCCLLog(read(t, "nccllog-383-gdr-level-distance.txt"))
	if v, ok := g.EnvValue("NCCL_NET_GDR_LEVEL"); !ok || v != "PHB" || len(g.GDRGPU) != 11 {
		t.Errorf("env %q %v gpus %d", v, ok, len(g.GDRGPU))
	}
	if d := g.GDRGPU[2]; d.Enabled || d.GPU != "18000" || d.HCA != "0" || d.Distance != 5 || d.Limit != 4 || d.Host != "node-1" {
		t.Errorf("decision %+v", d)
	}
	h := ParseNCCLLog(read(t, "nccllog-1537-gdr-disabled-hca.txt"))
	if len(h.Networks) != 1 || h.Networks[0].Text != "IB" || len(h.IBDevices) != 1 || len(h.GDRHCA) != 2 || h.GDRHCA[1].Name != "mlx5_1" || h.GDRHCA[1].Enabled {
		t.Errorf("%+v", h)
	}
	s := ParseNCCLLog(read(t, "nccllog-451-container-no-device.txt"))
	if len(s.OpenFailed) != 2 || len(s.NoIBDevice) != 1 || len(s.Networks) != 1 || s.Networks[0].Text != "Socket" || len(s.Warnings) != 2 {
		t.Errorf("%+v", s)
	}
	for _, line := range []string{
		"[1,0]<stdout>:test-nccl-worker-0:22:22 [0] NCCL INFO Using network Socket",
		"10.0.87.143: 10.0.87.143: ip-10-0-87-143:149:298 [5] register_mr_buffers:465 NCCL WARN NET/OFI Unable to register memory",
		"ip-10-216-179-87:718888:719046 [3] NCCL INFO Channel 00/0 : 11[201d0] -> 2[201c0] [send] via NET/AWS Libfabric/0/GDRDMA",
		"h:1:1 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
	} {
		x := ParseNCCLLog([]byte(line))
		if x.Lines != 1 || len(x.Hosts) != 1 || strings.HasPrefix(x.Hosts[0], "10.") {
			t.Errorf("%q: %+v", line, x)
		}
	}
	if x := ParseNCCLLog([]byte("ip-10-216-179-87:718888:719046 [3] NCCL INFO Channel 00/0 : 11[201d0] -> 2[201c0] [send] via NET/AWS Libfabric/0/GDRDMA")); x.Channels[0].Net != "AWS Libfabric" || !x.Channels[0].GDR {
		t.Errorf("plugin name with a space: %+v", x.Channels)
	}
	if x := ParseNCCLLog([]byte("h:1:1 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1")); len(x.Rings) != 1 || x.Rings[0].GDR != 1 || x.Rings[0].PXN != 0 {
		t.Errorf("rings %+v", x.Rings)
	}
}

// TestParseNCCLTestsSweepPerOp: -o all (and -d all) repeat the size sweep
// for each reduction; that is not interleaving. Rows from
// NVIDIA/nccl-tests#167 (all_reduce_perf -o all: the max sweep, then min).
func TestParseNCCLTestsSweepPerOp(t *testing.T) {
	rows := "      203776         50944     float     max      -1    125.2    1.63    3.05      0    125.8    1.62    3.04      0\n" +
		"      204800         51200     float     max      -1    125.6    1.63    3.06      0    124.6    1.64    3.08      0\n" +
		"      196608         49152     float     min      -1    125.5    1.57    2.94      0    124.9    1.57    2.95      0\n" +
		"      197632         49408     float     min      -1    125.4    1.58    2.96      0    124.4    1.59    2.98      0\n"
	nt, err := ParseNCCLTests([]byte(rows))
	if err != nil || len(nt.Rows) != 4 || nt.Dropped != 0 || nt.LargestBytes() != 204800 || len(nt.Largest()) != 1 || nt.Largest()[0].Redop != "max" {
		t.Errorf("%v %+v", err, nt)
	}
}
