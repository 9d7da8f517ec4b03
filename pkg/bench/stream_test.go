package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// fixtureLines are every line of the recorded fixtures, and variants of
// each NCCL and channel line with its prefix and spacing changed.
func fixtureLines(t testing.TB) []string {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			out = append(out, l, "x "+l, "[1] "+l, strings.Replace(l, " [", "  [", 1), strings.Replace(l, "] ", "] f.cc:12 ", 1),
				strings.Replace(l, ":", "::", 1), strings.Replace(l, " NCCL", "\tNCCL", 1), strings.TrimSuffix(l, "/GDRDMA")+" # x",
				"a:1:2 [0] b:3:4 [1] NCCL INFO "+l, "NCCL INFO "+l, strings.Replace(l, "[", "<stdout>[", 1))
			if i := strings.Index(l, "NCCL INFO "); i >= 0 {
				msg := l[i+10:]
				out = append(out, msg, "Ring "+strings.TrimPrefix(msg, "Channel "), strings.Replace(msg, "/0 :", " :", 1),
					strings.Replace(msg, "[send] ", "", 1), strings.Replace(msg, "->", "- >", 1), msg+"  ", msg+"#c",
					strings.Replace(msg, "via ", "via #", 1), strings.Replace(msg, "[", "[zz", 1))
			}
		}
	}
	return out
}

// TestSplitNCCLLineAgrees: the hand-written reading of the usual NCCL
// prefix gives what the regular expressions give, on every line of the
// fixtures and variants of each.
func TestSplitNCCLLineAgrees(t *testing.T) {
	n := 0
	for _, l := range fixtureLines(t) {
		h, lv, msg, ok := fastNCCLLine(l)
		if !ok {
			continue
		}
		n++
		m := reNCCLLine.FindStringSubmatch(l)
		if m == nil || m[1] != h || m[5] != lv || m[6] != msg {
			t.Errorf("%q: fast %q %q %q, regexp %q", l, h, lv, msg, m)
		}
	}
	if n < 500 {
		t.Errorf("only %d lines read by the fast path", n)
	}
}

// TestParseChannelAgrees: the hand-written channel reader gives what
// reNCCLChannel gives.
func TestParseChannelAgrees(t *testing.T) {
	n := 0
	for _, l := range fixtureLines(t) {
		c, ok := fastChannel(l)
		if !ok {
			continue
		}
		n++
		m := reNCCLChannel.FindStringSubmatch(l)
		if m == nil || m[3] != c.FromBus || m[5] != c.ToBus || m[6] != c.Dir || m[7] != c.Via {
			t.Errorf("%q: fast %+v, regexp %q", l, c, m)
			continue
		}
		if n := reNCCLNet.FindStringSubmatch(c.Via); (n == nil) != (c.Net == "") || (n != nil && (n[1] != c.Net || strings.Contains(n[3], "/GDRDMA") != c.GDR)) {
			t.Errorf("%q: net %q gdr %v, regexp %q", c.Via, c.Net, c.GDR, n)
		}
	}
	if n < 30 {
		t.Errorf("only %d channel lines read by the fast path", n)
	}
}

// TestJudgeReaderChunks: the verdicts do not depend on how the input
// arrives (one byte per read), nor on a missing final line end.
func TestJudgeReaderChunks(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	e := ExpectFor(nil, 100)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err1 := JudgeParts(b, e)
		got, err2 := JudgeReader(iotest.OneByteReader(bytes.NewReader(bytes.TrimSuffix(b, []byte("\n")))), e)
		if (err1 == nil) != (err2 == nil) || len(want) != len(got) {
			t.Fatalf("%s: %d parts %v, one byte at a time %d %v", f, len(want), err1, len(got), err2)
		}
		for i := range want {
			if strings.Join(Lines(want[i].Verdicts), "\n") != strings.Join(Lines(got[i].Verdicts), "\n") {
				t.Errorf("%s part %d differs", f, i)
			}
		}
	}
}

// TestEachLineLong: a line longer than 64 KiB is read up to there, and the
// lines after it are read.
func TestEachLineLong(t *testing.T) {
	in := "a\r\n" + strings.Repeat("x", maxLineBytes+10) + "\nb\n[1,0]<stdout>:c"
	var got []string
	if err := eachLine(strings.NewReader(in), func(i int, l, raw string) { got = append(got, l) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != "a" || len(got[1]) != maxLineBytes || got[2] != "b" || got[3] != "c" {
		t.Errorf("%d lines: %q %d %q", len(got), got[0], len(got[1]), got[2:])
	}
}

// TestEnvLineAgrees: the hand-written reading of "NCCL_X set by
// environment to V" gives what reNCCLEnv gives.
func TestEnvLineAgrees(t *testing.T) {
	n := 0
	for _, l := range append(fixtureLines(t), "NCCL_A set to 1 .", "NCCL_B set by environment to x..", "NCCL_c set to 1", "NCCL_ set to 1",
		"NCCL_D set to", "NCCL_E set to  \t", "NCCL_F set by environment to a b.  ") {
		if i := strings.Index(l, "NCCL INFO "); i >= 0 {
			l = l[i+10:]
		}
		if !strings.HasPrefix(l, "NCCL_") {
			continue
		}
		n++
		name, value, ok := envLine(l)
		m := reNCCLEnv.FindStringSubmatch(l)
		if ok != (m != nil) || (ok && (m[1] != name || strings.TrimSpace(m[2]) != value)) {
			t.Errorf("%q: %q %q %v, regexp %q", l, name, value, ok, m)
		}
	}
	if n < 10 {
		t.Errorf("%d lines", n)
	}
}

// FuzzFastPathsAgree: on any line, the hand-written readers (NCCL prefix,
// channel, environment line) give what the regular expressions give
// whenever they accept a line.
func FuzzFastPathsAgree(f *testing.F) {
	seed(f)
	f.Add([]byte("h:1:2 [0] NCCL INFO Channel 00/0 : 1[a] -> 2[b] [send] via NET/IB/0/GDRDMA\nNCCL_X set to 1.\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range strings.Split(string(data), "\n") {
			if h, lv, msg, ok := fastNCCLLine(l); ok {
				if m := reNCCLLine.FindStringSubmatch(l); m == nil || m[1] != h || m[5] != lv || m[6] != msg {
					t.Fatalf("%q: fast %q %q %q, regexp %q", l, h, lv, msg, m)
				}
			}
			if c, ok := fastChannel(l); ok {
				if m := reNCCLChannel.FindStringSubmatch(l); m == nil || m[3] != c.FromBus || m[5] != c.ToBus || m[6] != c.Dir || m[7] != c.Via {
					t.Fatalf("%q: fast %+v, regexp %q", l, c, m)
				}
			}
			if name, value, ok := envLine(l); ok {
				if m := reNCCLEnv.FindStringSubmatch(l); m == nil || m[1] != name || strings.TrimSpace(m[2]) != value {
					t.Fatalf("%q: %q %q, regexp %q", l, name, value, m)
				}
			}
		}
	})
}

// TestRepeatedCommunicators: the lines NCCL prints again for every
// communicator of a job are kept once per host and text, so a log of
// many communicators grows the lists by its hosts, not its lines.
func TestRepeatedCommunicators(t *testing.T) {
	one := "h1:1:2 [0] NCCL INFO Using network IB\nh1:1:2 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.\n" +
		"h1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
	l := ParseNCCLLog([]byte(strings.Repeat(one, 1000) + strings.Replace(one, "h1", "h2", -1)))
	if l.Lines != 3003 || len(l.Networks) != 2 || len(l.IBDevices) != 2 || len(l.Env) != 1 {
		t.Errorf("%d lines: %d networks, %d devices, %d env", l.Lines, len(l.Networks), len(l.IBDevices), len(l.Env))
	}
	if v, ok := l.EnvValue("NCCL_IB_GID_INDEX"); !ok || v != "3" {
		t.Errorf("%q %v", v, ok)
	}
}
