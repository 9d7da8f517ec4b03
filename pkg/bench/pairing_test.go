package bench

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// railsLog is the recorded multi-NIC NCCL log (tpgds-aihub0003: 8 GPUs,
// NCCL 2.29.3, channels of GPU i via NET/IB/i, mlx5_i).
const railsLog = "nccllog-slurmv4-8rails-roce.txt"

// TestGPUNICsRecorded: the recorded log's GPUs, each on the NIC of its
// own index, named from "NET/IB : Using", with the bus IDs of its
// ncclCommInitRank lines, in NVML order.
func TestGPUNICsRecorded(t *testing.T) {
	got := ParseNCCLLog(read(t, railsLog)).GPUNICs()
	bus := []string{"a000", "18000", "3b000", "44000", "87000", "90000", "b8000", "c1000"}
	if len(got) != 8 {
		t.Fatalf("%d GPUs: %+v", len(got), got)
	}
	for i, g := range got {
		want := GPUNIC{Host: "tpgds-aihub0003", GPU: fmt.Sprint(i), BusID: bus[i],
			NICs: []NICUse{{Net: "IB", Dev: i, Name: fmt.Sprintf("mlx5_%d", i), Lines: 8}}}
		if !reflect.DeepEqual(g, want) {
			t.Errorf("GPU %d: %+v, want %+v", i, g, want)
		}
	}
}

// TestGPUNICsForms: the older bus-ID brackets, lines without brackets,
// the bus ID of NCCL 2.18's "comm 0x… nvmlDev 0 busId 1b000 … Init START",
// a GPU on two NICs, sockets left out, lines without a host, and the
// device names of "NET/IB : Using" ([RO] and other flags skipped).
func TestGPUNICsForms(t *testing.T) {
	log := strings.Join([]string{
		"h1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
		"h1:1:1 [0] NCCL INFO comm 0x55d5c4a0b2c0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x5e1fa0b1c2d3e4f5 - Init START",
		"h1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/0/GDRDMA",
		"h1:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 2[0] [send] via NET/IB/1/GDRDMA",
		"h1:1:1 [0] NCCL INFO Channel 02/0 : 0[0] -> 2[0] [send] via NET/IB/0/GDRDMA",
		"h1:1:1 [0] NCCL INFO Channel 03/0 : 0[0] -> 2[0] [send] via NET/Socket/0",
		"h2:1:1 [0] NCCL INFO Channel 02/0 : 13[b2000] -> 4[b1000] [receive] via NET/IB/0/GDRDMA",
		"h3:1:1 [0] NCCL INFO Ring 00 : 7 -> 8 [send] via NET/IB/0",
		"NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/IB/1",
	}, "\n")
	got := ParseNCCLLog([]byte(log)).GPUNICs()
	want := []GPUNIC{
		{Host: "h1", GPU: "0", BusID: "1b000", NICs: []NICUse{{Net: "IB", Dev: 0, Name: "mlx5_0", Lines: 2}, {Net: "IB", Dev: 1, Name: "mlx5_1", Lines: 1}}},
		{Host: "h2", GPU: "b1000", NICs: []NICUse{{Net: "IB", Dev: 0, Lines: 1}}},
		{Host: "h3", Rank: 7, NICs: []NICUse{{Net: "IB", Dev: 0, Lines: 1}}},
		{Host: "", GPU: "0", NICs: []NICUse{{Net: "IB", Dev: 1, Lines: 1}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	var labels []string
	for _, g := range got {
		labels = append(labels, g.label())
	}
	if s := strings.Join(labels, "; "); s != "GPU 0 (bus 1b000); GPU b1000; rank 7; GPU 0" {
		t.Errorf("labels %s", s)
	}
	// consecutive lines of two hosts' GPU 0 stay apart
	two := ParseNCCLLog([]byte("h1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/0\n" +
		"h2:1:1 [0] NCCL INFO Channel 00/0 : 2[0] -> 0[0] [send] via NET/IB/1\n")).GPUNICs()
	if len(two) != 2 || two[0].NICs[0].Dev != 0 || two[1].Host != "h2" || two[1].NICs[0].Dev != 1 {
		t.Errorf("two hosts: %+v", two)
	}
	names := ibDeviceNames("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [8]mlx5_10:1/RoCE [RO]; OOB ens3np0:10.99.91.49<0>")
	if !reflect.DeepEqual(names, map[int]string{0: "mlx5_0", 1: "mlx5_1", 8: "mlx5_10"}) {
		t.Errorf("names %v", names)
	}
}

// railTests is the recorded log with a nccl-tests table after it
// (DeepOps' 22.92 GB/s: far below 8 or 4 rails of 200 Gb/s), and extra
// NCCL lines before it (built for the test).
func railTests(t *testing.T, extra ...string) []byte {
	t.Helper()
	var b []byte
	for _, l := range extra {
		b = append(b, l+"\n"...)
	}
	b = append(b, read(t, railsLog)...)
	return append(b, read(t, "nccltests-deepops-roce-2x100g.txt")...)
}

// passedRails is the rdma-rail verdicts of ib_write_bw on k rails of 2
// hosts, every pair at 92.40 Gb/s on 100 Gb/s rails (JudgeRailPairs),
// rail slow below its line unless it is -1.
func passedRails(t *testing.T, k, slow int) []Verdict {
	t.Helper()
	runs := railRuns(t, railLayouts["rail-optimized"](k, 2), func(r int, c, s HostPort) bool { return r == slow })
	return JudgeRailPairs(runs, railExpect(k, 100), nil, nil)
}

// busbwOn judges data against e and returns the busbw verdict.
func busbwOn(t *testing.T, data []byte, e Expect) Verdict {
	t.Helper()
	e.GIDIndex = 3
	_, vs, err := Judge(data, e)
	if err != nil || vs[0].Check != CheckBusBW || vs[0].Status != StatusFail {
		t.Fatalf("%v\n%s", err, strings.Join(Lines(vs), "\n"))
	}
	return vs[0]
}

// planned is e with rail r's GPUs: perRail of them in order (8 GPUs on 4
// rails: GPUs 0–1 with rail 0, …).
func planned(e Expect, perRail int) Expect {
	for r := range e.Rails {
		e.Rails[r].GPUs = nil
		for g := r * perRail; g < (r+1)*perRail; g++ {
			e.Rails[r].GPUs = append(e.Rails[r].GPUs, g)
		}
	}
	return e
}

// TestPairingCauseRailsPassed: every rail passes, busbw falls short. The
// one cause is the GPU–NIC pairing and the topology file, with what the
// log shows: with 8 rails and GPU i planned on rail i, the log's pairing
// holds (so the GPU–NIC path is what to check); with 4 rails and two GPUs
// per rail, GPUs 1–7 use a NIC other than their rail's.
func TestPairingCauseRailsPassed(t *testing.T) {
	e := planned(railExpect(8, 200), 1)
	e.PairVerdicts = passedRails(t, 8, -1)
	v := busbwOn(t, railTests(t), e)
	if len(v.Causes) != 1 || v.Causes[0].Layer != LayerPairing || v.Causes[0].Hosts != nil {
		t.Fatalf("%s", v.Line())
	}
	for _, s := range []string{
		"every rail passes ib_write_bw at its line (rails 0–7, the rdma-rail verdicts), yet busbw falls short of the rails' sum",
		"in a vSphere VM every passed-through device sits behind its own virtual root port, so without a topology file NCCL sees every GPU–NIC path as PHB and pairs GPUs with NICs by index",
		"NVIDIA/nccl-tests#156", "NVIDIA/nccl-tests#380", "NVIDIA/nccl#439", "#1303",
		"the log does not show whether NCCL read a topology file (it prints 'Loading topology file …' with NCCL_DEBUG_SUBSYS=GRAPH)",
		"the log shows on tpgds-aihub0003: GPU 0 (bus a000) → NET/IB/0 (mlx5_0, rail 0), GPU 1 (bus 18000) → NET/IB/1 (mlx5_1, rail 1),",
		"GPU 7 (bus c1000) → NET/IB/7 (mlx5_7, rail 7); every GPU the rails name uses its own rail's NIC, as planned: the pairing holds in this log",
		"fix: the pairing holds, so check the GPU–NIC path: `rdggen check --target esxi,hosts`",
	} {
		if !strings.Contains(v.Causes[0].Line(), s) {
			t.Errorf("lacks %q:\n%s", s, v.Causes[0].Line())
		}
	}

	e = planned(railExpect(4, 200), 2)
	e.PairVerdicts = passedRails(t, 4, -1)
	v = busbwOn(t, railTests(t), e)
	c := v.Causes[0]
	if len(v.Causes) != 1 || c.Layer != LayerPairing || !reflect.DeepEqual(c.Hosts, []string{"tpgds-aihub0003"}) {
		t.Fatalf("%s", v.Line())
	}
	for _, s := range []string{
		"GPU 3 (bus 44000) → NET/IB/3 (mlx5_3, rail 3), GPU 4 (bus 87000) → NET/IB/4 (mlx5_4),",
		": not its rail's NIC for GPU 1 (planned rail 0, mlx5_0), GPU 2 (planned rail 1, mlx5_1), GPU 3 (planned rail 1, mlx5_1), GPU 4 (planned rail 2, mlx5_2), GPU 5 (planned rail 2, mlx5_2), GPU 6 (planned rail 3, mlx5_3), GPU 7 (planned rail 3, mlx5_3)",
		"7 of the 8 GPU(s) the rails name use a NIC other than their rail's: the pairing is wrong there",
		"fix: `rdggen check --target hosts` for each VM's topology file (present at /var/run/nvidia-topologyd/virtualTopology.xml, valid, naming bus IDs the guest has) and `rdggen apply --target hosts` to write it; leave NCCL_TOPO_FILE unset unless it names that file; " +
			"then rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH and read 'Loading topology file …', 'NET/IB : Using [0]mlx5_0:1/RoCE [1]…' and each GPU's channels 'via NET/IB/<n>': every GPU on its own rail's NIC",
	} {
		if !strings.Contains(c.Line(), s) {
			t.Errorf("lacks %q:\n%s", s, c.Line())
		}
	}
}

// TestPairingCauseTopologyFile: the log's NCCL_TOPO_FILE elsewhere than
// NCCL's default path is named (it replaces that path); a "Loading
// topology file" line says which file NCCL read.
func TestPairingCauseTopologyFile(t *testing.T) {
	e := planned(railExpect(8, 200), 1)
	e.PairVerdicts = passedRails(t, 8, -1)
	v := busbwOn(t, railTests(t, "tpgds-aihub0003:3828976:3828976 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/topo/h100.xml",
		"tpgds-aihub0003:3828976:3828976 [0] NCCL INFO Loading topology file /opt/topo/h100.xml"), e)
	if s := v.Causes[0].Finding; !strings.Contains(s, "; the log shows NCCL_TOPO_FILE=/opt/topo/h100.xml, which replaces NCCL's default path: /var/run/nvidia-topologyd/virtualTopology.xml is not read; NCCL loaded /opt/topo/h100.xml on tpgds-aihub0003; the log shows on") {
		t.Errorf("%s", s)
	}
	v = busbwOn(t, railTests(t, "tpgds-aihub0003:3828976:3828976 [0] NCCL INFO Loading topology file /var/run/nvidia-topologyd/virtualTopology.xml",
		"other-host:1:1 [0] NCCL INFO Using network IB"), e)
	if s := v.Causes[0].Finding; !strings.Contains(s, "; NCCL loaded /var/run/nvidia-topologyd/virtualTopology.xml on tpgds-aihub0003; no 'Loading topology file' line from other-host; the log shows on") {
		t.Errorf("%s", s)
	}
}

// TestPairingCauseOtherwise: a rail below its line is the cause instead;
// without the rails' verdicts the pairing comes after the usual causes,
// as what to look at once the rails pass; without an NCCL log the rails'
// pass still names the pairing, and asks for the log.
func TestPairingCauseOtherwise(t *testing.T) {
	e := planned(railExpect(4, 200), 2)
	e.PairVerdicts = passedRails(t, 4, 2)
	v := busbwOn(t, railTests(t), e)
	if len(v.Causes) != 1 || v.Causes[0].Line() != "cause (fabric): rail 2 is below the line in ib_write_bw (the rdma-rail verdicts): NCCL's channels run over every rail at once, so a slow rail holds busbw down; fix: fix what the rdma-rail verdicts of rail 2 name (their hosts, ports and leaves), then rerun the bench" {
		t.Errorf("a slow rail:\n%s", v.Line())
	}

	e.PairVerdicts = nil
	v = busbwOn(t, railTests(t), e)
	if len(v.Causes) != 2 || v.Causes[0].Layer != LayerFabric || v.Causes[1].Layer != LayerPairing ||
		!strings.HasPrefix(v.Causes[1].Finding, "once every rail passes ib_write_bw at its line (rdggen bench runs the pairs rail by rail), a busbw short of the rails' sum lies between the GPUs and the NICs") {
		t.Errorf("no rail verdicts:\n%s", v.Line())
	}

	e.PairVerdicts = passedRails(t, 4, -1)
	_, vs, err := Judge(read(t, "nccltests-deepops-roce-2x100g.txt"), e)
	if err != nil || len(vs) != 1 || len(vs[0].Causes) != 2 || vs[0].Causes[0].Layer != LayerBenchmark ||
		!strings.Contains(vs[0].Causes[1].Finding, "; the output has no NCCL log to show which NIC each GPU used") {
		t.Errorf("no log:\n%s", strings.Join(Lines(vs), "\n"))
	}

	// one rail (400 Gb/s: busbw below its line): the causes of today, no
	// pairing
	one := railExpect(1, 400)
	one.PairVerdicts = passedRails(t, 1, -1)
	v = busbwOn(t, railTests(t), one)
	if len(v.Causes) != 1 || v.Causes[0].Layer != LayerFabric || !strings.Contains(v.Causes[0].Finding, "busbw below the line with RDMA in use") {
		t.Errorf("one rail:\n%s", v.Line())
	}
}

// docBlock is the ``` block of docs/bench.md after the line ending in
// intro.
func docBlock(t *testing.T, intro string) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/bench.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), intro+"\n```\n")
	if !ok {
		t.Fatalf("docs/bench.md has no block after %q", intro)
	}
	block, _, _ = strings.Cut(block, "```")
	return strings.Split(strings.TrimSuffix(block, "\n"), "\n")
}

// matchElided reports whether got is want, where " …" in want stands for
// any text: want's parts between them appear in got in order, the first
// at its start, and a line without " …" is got exactly.
func matchElided(want, got string) bool {
	rest := got
	for j, part := range strings.Split(want, " …") {
		k := strings.Index(rest, part)
		if k < 0 || j == 0 && k != 0 {
			return false
		}
		rest = rest[k+len(part):]
	}
	return strings.Contains(want, " …") || rest == ""
}

func checkDocBlock(t *testing.T, intro string, vs []Verdict) {
	t.Helper()
	want := docBlock(t, intro)
	got := strings.Split(strings.Join(Lines(vs), "\n"), "\n")
	if len(want) != len(got) {
		t.Fatalf("the page shows %d lines, the judge prints %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for i := range want {
		if !matchElided(want[i], got[i]) {
			t.Errorf("line %d:\npage  %q\njudge %q", i+1, want[i], got[i])
		}
	}
}

// TestBenchRailsSamples: the samples of docs/bench.md's "Several rails"
// are this judge's output.
func TestBenchRailsSamples(t *testing.T) {
	runs := railRuns(t, railLayouts["rail-optimized"](4, 4), func(r int, c, s HostPort) bool { return r == 2 })
	var keep []Verdict
	for _, v := range JudgeRailPairs(runs, railExpect(4, 100), nil, nil) {
		if v.Check == CheckRDMARail || v.Check == CheckRDMAPairs {
			keep = append(keep, v)
		}
	}
	checkDocBlock(t, "of rail 2 at 41.3 Gb/s (values built for the test `TestJudgeRailPairsOneSlowRail`):", keep)

	e := planned(railExpect(4, 200), 2)
	e.PairVerdicts = passedRails(t, 4, -1)
	checkDocBlock(t, "built for the test):", []Verdict{busbwOn(t, railTests(t), e)})
}
