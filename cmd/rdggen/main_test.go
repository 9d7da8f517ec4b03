package main

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rdggen/rdggen/internal/render"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// rdggen runs the CLI in-process and returns exit status, stdout and stderr.
func rdggen(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func(string) string { return "" })
	return code, out.String(), errb.String()
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestGenerateReference is the README's main command: `rdggen -o out` writes
// the reference cluster's tree, byte for byte the golden one.
func TestGenerateReference(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := rdggen(t, "-o", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "8 hosts, 1 switch(es)") {
		t.Errorf("stdout: %s", stdout)
	}
	got := readTree(t, dir)
	delete(got, render.Marker)
	want := readTree(t, "../../testdata/golden/reference/out")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree differs from the golden reference (-want +got):\n%s", diff)
	}
	// The output tree holds: per host a daemon.json and route script, per VM a
	// VMX, per ESXi host a script, one switch config, hostfile and run.sh.
	count := func(prefix, suffix string) int {
		n := 0
		for p := range got {
			if strings.HasPrefix(p, prefix) && strings.HasSuffix(p, suffix) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		prefix, suffix string
		want           int
	}{
		{"switch/", ".cfg", 1}, {"esxi/", ".vmx", 8}, {"esxi/", ".sh", 8},
		{"hosts/", "/daemon.json", 8}, {"hosts/", "/routes.sh", 8},
		{"horovod/hostfile", "", 1}, {"horovod/run.sh", "", 1},
	} {
		if n := count(c.prefix, c.suffix); n != c.want {
			t.Errorf("%s*%s: %d files, want %d", c.prefix, c.suffix, n, c.want)
		}
	}
}

func TestInvalidInventoryWritesNothing(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "cluster.yaml")
	src := strings.Replace(string(inventory.ReferenceYAML), "port: 1/8}", "port: 1/33}", 1)
	src = strings.Replace(src, "  mtu: 1500 ", "  mtuu: 1500 ", 1)
	if err := os.WriteFile(inv, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := rdggen(t, "-f", inv, "-o", out)
	if code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s", code, exitInvalid, stderr)
	}
	at := func(token string) string { // line:col of token in src
		for i, l := range strings.Split(src, "\n") {
			if c := strings.Index(l, token); c >= 0 {
				return fmt.Sprintf("%s:%d:%d", inv, i+1, c+1)
			}
		}
		t.Fatalf("no %q", token)
		return ""
	}
	for _, want := range []string{
		at("mtuu") + `: docker.mtuu: unknown key "mtuu"`,
		at("1/33") + ": hosts[7].data.port: 1/33 is outside SN2700 ports 1/1-1/32",
		"2 problem(s); nothing was written or pushed",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output written for an invalid inventory: %v", err)
	}
	if code, _, _ := rdggen(t, "validate", "-f", inv); code != exitInvalid {
		t.Errorf("validate: exit %d", code)
	}
	if code, _, stderr := rdggen(t, "apply", "--dry-run", "-f", inv); code != exitInvalid || !strings.Contains(stderr, "nothing was written or pushed") {
		t.Errorf("apply: exit %d: %s", code, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"frobnicate"},
		{"validate", "extra"},
		{"apply", "--target", "router"},
		{"apply", "--parallel", "0"},
		{"-f", "/nonexistent/cluster.yaml"},
	} {
		if code, _, stderr := rdggen(t, args...); code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want %d with a message", args, code, stderr, exitUsage)
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"apply", "--help"}, {"validate", "--help"}} {
		code, stdout, _ := rdggen(t, args...)
		if code != exitOK || !strings.Contains(stdout, "Usage") || !strings.Contains(stdout, "Flags:") {
			t.Errorf("%v: exit %d, help not on stdout", args, code)
		}
	}
	_, stdout, _ := rdggen(t, "apply", "--help")
	for _, want := range []string{"switch", "esxi", "hosts", "--dry-run", "--parallel", "--known-hosts", "Examples:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("apply --help lacks %q", want)
		}
	}
}

// TestExampleLoadsBack: `rdggen example` is commented YAML that validates and
// loads to the same inventory as the embedded reference.
func TestExampleLoadsBack(t *testing.T) {
	code, stdout, _ := rdggen(t, "example")
	if code != exitOK || !strings.Contains(stdout, "# ") {
		t.Fatalf("exit %d", code)
	}
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := rdggen(t, "validate", "-f", path); code != exitOK || !strings.Contains(out, "valid: 8 hosts on 8 ESXi host(s), 1 switch(es)") {
		t.Fatalf("validate: exit %d %s %s", code, out, stderr)
	}
	got, err := inventory.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := cmp.Options{
		cmpopts.IgnoreUnexported(inventory.Inventory{}),
		cmpopts.IgnoreFields(inventory.Inventory{}, "File"),
		cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
		cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
		cmp.Comparer(func(a, b inventory.Version) bool { return a.String() == b.String() }),
	}
	if diff := cmp.Diff(inventory.Reference(), got, opts); diff != "" {
		t.Errorf("example does not load back to the reference (-want +got):\n%s", diff)
	}
}

func TestSelectTargets(t *testing.T) {
	all := applyTargets()
	got, err := selectTargets(all, "hosts, switch,hosts")
	if err != nil || targetNames(got) != "hosts,switch" {
		t.Errorf("got %v, %v", targetNames(got), err)
	}
	if got, _ := selectTargets(all, ""); targetNames(got) != "switch,esxi,hosts,workers" {
		t.Errorf("default order: %s", targetNames(got))
	}
}

// docsText is README.md and docs/*.md, one after the other: the samples
// the tests compare with the tool are found wherever the manual keeps them.
func docsText(t *testing.T) []byte {
	t.Helper()
	names, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, name := range append([]string{"../../README.md"}, names...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(append(all, b...), '\n')
	}
	return all
}

// TestREADMEValidateSample runs the manual's validate example and compares
// its output, so the sample cannot drift from the tool.
func TestREADMEValidateSample(t *testing.T) {
	readme := docsText(t)
	_, block, ok := strings.Cut(string(readme), "$ rdggen validate -f cluster.yaml\n")
	if !ok {
		t.Fatal("README has no validate sample")
	}
	want, _, _ := strings.Cut(block, "```")
	src := strings.Replace(string(inventory.ReferenceYAML), "  mtu: 1500 ", "  mtuu: 1500 ", 1)
	src = strings.Replace(src, "port: 1/8}", "port: 1/33}", 1)
	t.Chdir(t.TempDir())
	if err := os.WriteFile("cluster.yaml", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := rdggen(t, "validate", "-f", "cluster.yaml")
	if code != exitInvalid || stdout+stderr != want {
		t.Errorf("exit %d; README shows:\n%s\nthe tool prints:\n%s%s", code, want, stdout, stderr)
	}
}

// Every package directory the README and docs/ name (`internal/{a,b}`
// spelled out) exists, and the docker MTU range they state is the one
// validation holds.
func TestREADMEPathsExist(t *testing.T) {
	// The user's pages (rules.md and nvue.md also cite upstream source paths).
	var readme []byte
	for _, name := range []string{"README.md", "CONTRIBUTING.md", "docs/generate.md", "docs/apply.md", "docs/check.md", "docs/run.md",
		"docs/bench-live.md", "docs/onyx.md", "docs/cumulus.md", "docs/credentials.md", "docs/library.md"} {
		b, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		readme = append(append(readme, b...), '\n')
	}
	re := regexp.MustCompile("`((?:cmd|pkg|internal)/[A-Za-z0-9_/{},.-]*)`")
	seen := 0
	for _, m := range re.FindAllStringSubmatch(string(readme), -1) {
		for _, p := range expandBraces(m[1]) {
			p = strings.TrimSuffix(p, "/")
			if strings.Contains(p, ".") && !strings.HasSuffix(p, ".go") { // a file name with an extension is not a directory
				continue
			}
			seen++
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("README names %s, which does not exist", p)
			}
		}
	}
	if seen < 20 {
		t.Errorf("only %d paths found in the README", seen)
	}
	if want := fmt.Sprintf("MTU %d–%d", 68, inventory.MaxDataMTU); !strings.Contains(string(readme), "docker\n"+want) && !strings.Contains(string(readme), "docker "+want) {
		t.Errorf("README does not state the docker %s", want)
	}
}

// expandBraces spells out one {a,b,…} group of a path.
func expandBraces(p string) []string {
	i, j := strings.Index(p, "{"), strings.Index(p, "}")
	if i < 0 || j < i {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, expandBraces(p[:i]+alt+p[j+1:])...)
	}
	return out
}
