package bench

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// This file generates a SYNTHETIC nccl-tests run with its NCCL_DEBUG=INFO
// log, for the benchmarks: not a recorded output. Its lines follow the
// formats of the recorded fixtures (NCCL 2.18: nccllog-660-gdrdma-baremetal,
// nccltests-deepops-roce-2x100g) for a job of one GPU and one 100 Gb/s
// RoCE VF per node, 8 ring channels and 8 tree channels; about 8.3 KB per
// node, so 7,235 nodes make about 60 MB.

var (
	synthOut   = flag.String("synth-out", "", "TestSyntheticNCCLRun: also write a synthetic log of -synth-nodes nodes to this `FILE`")
	synthNodes = flag.Int("synth-nodes", 7235, "TestSyntheticNCCLRun: nodes of the log written to -synth-out")
)

// writeSyntheticNCCLRun writes the synthetic output of an all_reduce_perf
// run over nodes nodes (one rank each) to w.
func writeSyntheticNCCLRun(w io.Writer, nodes int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	host := func(r int) string { return fmt.Sprintf("gpu-node-%05d", r) }
	bus := func(r int) string { return []string{"1b000", "3d000", "89000", "b1000"}[r%4] }
	fmt.Fprintf(bw, "# nThread 1 nGpus 1 minBytes 8 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
	for r := 0; r < nodes; r++ {
		fmt.Fprintf(bw, "#  Rank %4d Group  0 Pid  %5d on %s device  0 [0x%s] NVIDIA A100-SXM4-80GB\n", r, 40000+r%20000, host(r), bus(r)[:2])
	}
	for r := 0; r < nodes; r++ {
		h, pid := host(r), 40000+r%20000
		p := func(tid int, format string, a ...any) {
			fmt.Fprintf(bw, "%s:%d:%d [0] NCCL INFO ", h, pid, pid+tid)
			fmt.Fprintf(bw, format, a...)
			bw.WriteByte('\n')
		}
		ip := fmt.Sprintf("10.%d.%d.%d", 10+r/65536, (r/256)%256, r%256)
		p(0, "Bootstrap : Using eth0:%s<0>", ip)
		p(0, "NET/Plugin : No plugin found (libnccl-net.so), using internal implementation")
		p(0, "cudaDriverVersion 12020")
		if r == 0 {
			fmt.Fprintf(bw, "NCCL version 2.18.5+cuda12.2\n")
		}
		p(0, "NCCL_IB_GID_INDEX set by environment to 3.")
		p(0, "NCCL_SOCKET_IFNAME set by environment to eth0")
		p(35, "NET/IB : Using [0]mlx5_2:1/RoCE [RO]; OOB eth0:%s<0>", ip)
		p(35, "Using non-device net plugin version 0")
		p(35, "Using network IB")
		p(35, "NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_2'")
		p(35, "comm 0x55d5c4a0b2c0 rank %d nranks %d cudaDev 0 nvmlDev 0 busId %s commId 0x5e1fa0b1c2d3e4f5 - Init START", r, nodes, bus(r))
		p(35, "Setting affinity for GPU 0 to ffff,ffff0000,00000000")
		p(35, "NVLS multicast support is not available on dev 0")
		if r == 0 {
			for c := 0; c < 2; c++ { // rank 0 prints each ring's order: one very long line per channel
				var b strings.Builder
				fmt.Fprintf(&b, "Channel %02d/08 :", c)
				for i := 0; i < nodes; i++ {
					fmt.Fprintf(&b, " %d", i)
				}
				p(35, "%s", b.String())
			}
		}
		p(35, "Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d", (r+1)%nodes, r, (r+nodes-1)%nodes, (r+1)%nodes, r, (r+nodes-1)%nodes)
		p(35, "P2P Chunksize set to 131072")
		prev, next := (r+nodes-1)%nodes, (r+1)%nodes
		for c := 0; c < 8; c++ {
			p(41, "Channel %02d/0 : %d[%s] -> %d[%s] [receive] via NET/IB/0/GDRDMA", c, prev, bus(prev), r, bus(r))
			p(35, "Channel %02d/0 : %d[%s] -> %d[%s] [send] via NET/IB/0/GDRDMA", c, r, bus(r), next, bus(next))
			p(47, "New proxy recv connection %d from %s<%d>, transport 2", c, ip, 40000+c)
			p(35, "Connection to proxy localRank 0 -> connection 0x7fa0f0000%03x", c*0x40)
			p(47, "NET/IB: Dev 0 Port 1 qpn %d mtu 5 GID 3 (0/A0A01FF)", 1800+c)
		}
		p(35, "Connected all rings")
		for c := 0; c < 8; c++ {
			p(41, "Channel %02d/0 : %d[%s] -> %d[%s] [receive] via NET/IB/0/GDRDMA", c, next, bus(next), r, bus(r))
			p(35, "Channel %02d/0 : %d[%s] -> %d[%s] [send] via NET/IB/0/GDRDMA", c, r, bus(r), prev, bus(prev))
		}
		p(35, "Connected all trees")
		p(35, "threadThresholds 8/8/64 | 57880/8/64 | 512 | 512")
		p(35, "8 coll channels, 0 collnet channels, 0 nvls channels, 8 p2p channels, 8 p2p channels per peer")
		p(35, "CC Off, Multi-GPU CC Off, workFifoBytes 1048576")
		p(35, "comm 0x55d5c4a0b2c0 rank %d nRanks %d nNodes %d localRanks 1 localRank 0 MNNVL 0", r, nodes, nodes)
		p(35, "comm 0x55d5c4a0b2c0 rank %d nranks %d cudaDev 0 busId %s commId 0x5e1fa0b1c2d3e4f5 - Init COMPLETE", r, nodes, bus(r))
		p(35, "Init timings: rank %d nranks %d total 1.52 (kernels 0.20, alloc 0.05, bootstrap 0.84, allgathers 0.02, topo 0.10, graphs 0.01, connections 0.28, rest 0.02)", r, nodes)
	}
	fmt.Fprintf(bw, "#\n#                                                              out-of-place                       in-place          \n")
	fmt.Fprintf(bw, "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
	fmt.Fprintf(bw, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n")
	for s := int64(8); s <= 4<<30; s *= 2 {
		frac := float64(s) / float64(s+(1<<20)) // reaches its plateau from a few MiB
		bus := 11.6 * frac
		alg := bus / 2 * float64(nodes) / float64(nodes-1)
		us := float64(s) / (alg * 1e3)
		if alg == 0 {
			us = 30
		}
		fmt.Fprintf(bw, "%12d  %12d     float     sum      -1  %7.1f  %6.2f  %6.2f      0  %7.1f  %6.2f  %6.2f      0\n", s, s/4, us, alg, bus, us, alg, bus)
	}
	fmt.Fprintf(bw, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 4.51234 \n#\n")
	return bw.Flush()
}

// TestSyntheticNCCLRun judges a small synthetic run (16 nodes): every
// verdict passes, the busbw at 4 GiB. With -synth-out FILE it also writes
// one of -synth-nodes nodes there, for measuring the binary beside wc -l.
func TestSyntheticNCCLRun(t *testing.T) {
	var b bytes.Buffer
	if err := writeSyntheticNCCLRun(&b, 16); err != nil {
		t.Fatal(err)
	}
	e := ExpectFor(nil, 100)
	e.GIDIndex = 3
	parts, err := JudgeParts(b.Bytes(), e)
	if err != nil || len(parts) != 1 || parts[0].Kind != KindNCCLTests {
		t.Fatalf("%v %+v", err, parts)
	}
	vs := parts[0].Verdicts
	text := strings.Join(Lines(vs), "\n")
	if !Passed(vs) || !strings.Contains(text, "11.60 GB/s out-of-place busbw at 4294967296 B (4 GiB)") {
		t.Errorf("synthetic run:\n%s", text)
	}
	if *synthOut != "" {
		f, err := os.Create(*synthOut)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := writeSyntheticNCCLRun(f, *synthNodes); err != nil {
			t.Fatal(err)
		}
	}
}

var synthCache = map[int][]byte{}

func synthetic(b *testing.B, nodes int) []byte {
	if d, ok := synthCache[nodes]; ok {
		return d
	}
	var buf bytes.Buffer
	if err := writeSyntheticNCCLRun(&buf, nodes); err != nil {
		b.Fatal(err)
	}
	synthCache[nodes] = buf.Bytes()
	return buf.Bytes()
}

// BenchmarkJudgeNCCLLog15MB and …60MB judge the synthetic run of 1,809 and
// 7,235 nodes (about 15 and 60 MB): the ratio of the two is the judge's
// linearity; MB/s is its speed.
func BenchmarkJudgeNCCLLog15MB(b *testing.B) { benchJudge(b, 1809) }
func BenchmarkJudgeNCCLLog60MB(b *testing.B) { benchJudge(b, 7235) }

func benchJudge(b *testing.B, nodes int) {
	data := synthetic(b, nodes)
	e := ExpectFor(nil, 100)
	e.GIDIndex = 3
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := JudgeParts(data, e); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBoundedReports: on the synthetic run of 2,000 nodes, every verdict
// that names nodes names at most MaxNamed and counts the rest, in the
// same words; the JSON keeps every node.
func TestBoundedReports(t *testing.T) {
	var b bytes.Buffer
	if err := writeSyntheticNCCLRun(&b, 2000); err != nil {
		t.Fatal(err)
	}
	parts, err := JudgeParts(b.Bytes(), ExpectFor(nil, 100))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range parts[0].Verdicts {
		l := v.Line()
		if len(l) > 2000 {
			t.Errorf("%s: %d characters", v.Check, len(l))
		}
		if strings.Contains(l, "gpu-node-00008") || strings.Contains(l, "gpu-node-01999") {
			t.Errorf("%s names a ninth node: %s", v.Check, l)
		}
		if strings.Contains(l, "gpu-node-00007") {
			n++
			if !strings.Contains(l, "… and 1,992 more") || len(v.Named) != 2000 || v.Named[1999] != "gpu-node-01999" {
				t.Errorf("%s: %d named\n%s", v.Check, len(v.Named), l)
			}
		}
	}
	if n != 2 { // transport and gpudirect-rdma
		t.Errorf("%d verdicts name nodes:\n%s", n, strings.Join(Lines(parts[0].Verdicts), "\n"))
	}
	if Names([]string{"a", "b"}) != "a, b" || thousands(1234567) != "1,234,567" {
		t.Error("Names")
	}
}
