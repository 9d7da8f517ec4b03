package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/exefile"
)

// docBlock is one fenced block of a Markdown file: its language (the word
// after the fence), its lines (the fence's indentation removed), and the
// doc-test directive on the line before the fence, if any.
type docBlock struct {
	file string
	line int // of the opening fence, 1-based
	lang string
	body []string
	// skip is the reason of `<!-- doc-test: skip (REASON) -->`; "" runs it.
	skip string
	// exit is the status each command must end with
	// (`<!-- doc-test: exit N -->`; default 0).
	exit int
}

var docDirective = regexp.MustCompile(`^<!-- doc-test: (skip|exit)(?: +(.*?))? *-->$`)

// docFiles are the Markdown files whose shell blocks run: README.md,
// CONTRIBUTING.md and docs/*.md (docs/research holds notes, not examples).
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../README.md", "../../CONTRIBUTING.md"}
	more, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, more...)
}

// parseDocBlocks returns the fenced blocks of a Markdown text, or an error
// for an unclosed fence or a directive that is not understood.
func parseDocBlocks(file, text string) ([]docBlock, error) {
	var out []docBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(l) - len(trimmed)
		b := docBlock{file: file, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
		if i > 0 {
			if m := docDirective.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				switch m[1] {
				case "skip":
					b.skip = strings.TrimSuffix(strings.TrimPrefix(m[2], "("), ")")
					if b.skip == "" {
						return nil, fmt.Errorf("%s:%d: doc-test: skip needs its reason in parentheses", file, i)
					}
				case "exit":
					n, err := strconv.Atoi(m[2])
					if err != nil || n < 0 || n > 255 {
						return nil, fmt.Errorf("%s:%d: doc-test: exit %q: want a status 0-255", file, i, m[2])
					}
					b.exit = n
				}
			} else if strings.HasPrefix(strings.TrimSpace(lines[i-1]), "<!-- doc-test") {
				return nil, fmt.Errorf("%s:%d: %q: want <!-- doc-test: skip (REASON) --> or <!-- doc-test: exit N -->", file, i, lines[i-1])
			}
		}
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "```" {
				closed = true
				break
			}
			body := lines[i]
			if len(body) >= indent && strings.TrimSpace(body[:indent]) == "" {
				body = body[indent:]
			}
			b.body = append(b.body, body)
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: unclosed ``` block", file, b.line)
		}
		out = append(out, b)
	}
	return out, nil
}

// docEnv is where the blocks run: a bin directory whose rdggen is this
// test binary as the command (TestMain, RDGGEN_TEST_MAIN=1).
type docEnv struct {
	root string // the repository
	bin  string
}

func newDocEnv(t *testing.T) *docEnv {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nRDGGEN_TEST_MAIN=1 exec " + shQuote(exe) + " \"$@\"\n"
	if err := exefile.Write(filepath.Join(bin, "rdggen"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	return &docEnv{root: root, bin: bin}
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// workDir is a fresh directory that looks like the repository's root to a
// page's blocks (each top-level entry linked in), so that relative paths
// (testdata/…, pkg/…, ./cmd/rdggen) resolve and what the block writes
// stays in the test's temporary directory.
func (e *docEnv) workDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(e.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if en.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(e.root, en.Name()), filepath.Join(dir, en.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// run runs script with bash in dir and returns its stdout, stderr and
// exit status. The script runs in a process group of its own, which is
// killed when it ends (a block's background process, the simulator, goes
// with it) or after two minutes.
func (e *docEnv) run(t *testing.T, dir, script string, errExit bool) (string, string, int) {
	t.Helper()
	// `go run ./cmd/rdggen` is rdggen, already built: the test binary.
	script = strings.ReplaceAll(script, "go run ./cmd/rdggen", "rdggen")
	opts := []string{"-o", "pipefail"}
	if errExit {
		opts = append([]string{"-e"}, opts...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append(opts, "-c", script)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+e.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "RDGGEN_TEST_MAIN=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("bash: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the block ran longer than 2 minutes")
	}
	return stdout.String(), stderr.String(), code
}

// matchOutput compares the output with a console block's expected lines;
// a line "…" stands for any number of lines.
func matchOutput(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "…" {
		for k := 0; k <= len(got); k++ {
			if matchOutput(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchOutput(want[1:], got[1:])
}

// TestDocs runs the shell blocks of README.md, CONTRIBUTING.md and docs/*.md
// against this rdggen (CONTRIBUTING.md, "Documentation that runs"), a
// page's blocks in order in one directory: each
// ```sh block as one bash -e script that must exit 0 (or its doc-test
// exit status), each ```console block command by command with its output
// compared; blocks marked `<!-- doc-test: skip (why) -->` are counted and
// skipped. Blocks of other languages are not run.
func TestDocs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash: %v (the documentation's shell blocks are bash)", err)
	}
	env := newDocEnv(t)
	ran, skipped, total := 0, 0, 0
	for _, f := range docFiles(t) {
		// A page's blocks run in order in one directory, as a reader
		// pastes them: a later block sees what an earlier one wrote.
		var dir string
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f, "../../")
		blocks, err := parseDocBlocks(name, string(src))
		if err != nil {
			t.Error(err)
			continue
		}
		for _, b := range blocks {
			if b.lang != "sh" && b.lang != "console" {
				continue
			}
			total++
			where := fmt.Sprintf("%s:%d", b.file, b.line)
			if b.skip != "" {
				skipped++
				t.Logf("%s: ```%s skipped: %s", where, b.lang, b.skip)
				continue
			}
			ran++
			if dir == "" {
				dir = env.workDir(t)
			}
			start := time.Now()
			if b.lang == "sh" {
				script := strings.Join(b.body, "\n")
				stdout, stderr, code := env.run(t, dir, script, true)
				if code != b.exit {
					t.Errorf("%s: exit %d, want %d\n%s\n--- stdout\n%s--- stderr\n%s", where, code, b.exit, script, stdout, stderr)
				}
			} else {
				runConsole(t, env, dir, where, b)
			}
			t.Logf("%s: ```%s ran (%.1fs)", where, b.lang, time.Since(start).Seconds())
		}
	}
	t.Logf("documentation shell blocks: %d run, %d skipped (need machines), %d in all", ran, skipped, total)
	if ran < 8 {
		t.Errorf("only %d shell blocks ran: the Markdown files were not read as expected", ran)
	}
}

// runConsole runs a ```console block: each "$ " line is a command, the
// lines up to the next "$ " line its expected output.
func runConsole(t *testing.T, env *docEnv, dir, where string, b docBlock) {
	t.Helper()
	type step struct {
		cmd  string
		want []string
	}
	var steps []step
	for _, l := range b.body {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{cmd: c})
			continue
		}
		if len(steps) == 0 {
			t.Errorf("%s: a console block starts with its $ command, not %q", where, l)
			return
		}
		steps[len(steps)-1].want = append(steps[len(steps)-1].want, l)
	}
	for _, s := range steps {
		stdout, stderr, code := env.run(t, dir, s.cmd, false)
		got := strings.Split(strings.TrimSuffix(stdout+stderr, "\n"), "\n")
		if stdout+stderr == "" {
			got = nil
		}
		if code != b.exit || !matchOutput(s.want, got) {
			t.Errorf("%s: $ %s\nexit %d (want %d); the page shows:\n%s\nthe tool prints:\n%s", where, s.cmd, code, b.exit,
				strings.Join(s.want, "\n"), stdout+stderr)
		}
	}
}

// The block parser: fences, indentation, directives, and the errors a page
// can hold.
func TestParseDocBlocks(t *testing.T) {
	src := "text\n<!-- doc-test: skip (needs a cluster) -->\n```sh\nrdggen check -f c.yaml\n```\n" +
		"- item\n  <!-- doc-test: exit 1 -->\n  ```console\n  $ rdggen validate -f x\n  x:1:1: bad\n  ```\n```yaml\na: 1\n```\n"
	blocks, err := parseDocBlocks("p.md", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 {
		t.Fatalf("%d blocks: %+v", len(blocks), blocks)
	}
	if b := blocks[0]; b.lang != "sh" || b.skip != "needs a cluster" || b.line != 3 || strings.Join(b.body, "|") != "rdggen check -f c.yaml" {
		t.Errorf("block 1: %+v", b)
	}
	if b := blocks[1]; b.lang != "console" || b.exit != 1 || b.skip != "" || strings.Join(b.body, "|") != "$ rdggen validate -f x|x:1:1: bad" {
		t.Errorf("block 2: %+v", b)
	}
	if b := blocks[2]; b.lang != "yaml" || b.skip != "" || b.exit != 0 {
		t.Errorf("block 3: %+v", b)
	}
	for _, bad := range []string{"```sh\nrdggen\n", "<!-- doc-test: skip -->\n```sh\nx\n```\n", "<!-- doc-test: exit one -->\n```sh\nx\n```\n",
		"<!-- doc-test: skipp (x) -->\n```sh\nx\n```\n"} {
		if _, err := parseDocBlocks("p.md", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if !matchOutput([]string{"a", "…", "d"}, []string{"a", "b", "c", "d"}) || matchOutput([]string{"a", "…", "d"}, []string{"a", "b"}) ||
		!matchOutput([]string{"a", "…"}, []string{"a"}) || matchOutput([]string{"a"}, []string{"a", "b"}) {
		t.Error("matchOutput")
	}
}
