package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docPages are the manual pages of each command: docs/<page>.md, and for
// bench also docs/bench-*.md (the manual is split between pages).
var docPages = map[string][]string{
	"generate": {"generate"},
	"validate": {"generate"},
	"example":  {"generate"},
	"version":  {"generate"},
	"apply":    {"apply"},
	"check":    {"check"},
	"run":      {"run"},
	"bench":    {"bench", "bench-*"},
	"lab":      {"lab"},
}

// helpFlag is a flag line of a command's help: "  -f, --file FILE  …" or
// "      --target LIST  …".
var helpFlag = regexp.MustCompile(`^\s+(?:-([A-Za-z]), )?--([a-z0-9-]+)`)

// helpFlags returns the flags `rdggen help CMD` prints: long name → short
// name ("" when none).
func helpFlags(t *testing.T, cmd string) map[string]string {
	t.Helper()
	code, help, stderr := rdggen(t, "help", cmd)
	if code != exitOK {
		t.Fatalf("rdggen help %s: exit %d\n%s", cmd, code, stderr)
	}
	flags := map[string]string{}
	_, list, _ := strings.Cut(help, "\nFlags:\n")
	for _, l := range strings.Split(list, "\n") {
		if m := helpFlag.FindStringSubmatch(l); m != nil {
			flags[m[2]] = m[1]
		}
	}
	return flags
}

// Every flag `rdggen help CMD` prints is named on CMD's page in docs/
// (as --long, or as -s where it has a short form), so the manual cannot
// leave out a flag the tool has; and the help ends by pointing at docs/.
func TestDocsNameEveryFlag(t *testing.T) {
	total := 0
	for cmd, pages := range docPages {
		var text strings.Builder
		for _, p := range pages {
			names, err := filepath.Glob(filepath.Join("..", "..", "docs", p+".md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				text.WriteString(string(b))
			}
		}
		if text.Len() == 0 {
			t.Errorf("rdggen %s: no page docs/%s.md", cmd, pages[0])
			continue
		}
		doc := text.String()
		if !strings.Contains(doc, "rdggen "+cmd) && cmd != "generate" {
			t.Errorf("docs/%s.md never shows rdggen %s", pages[0], cmd)
		}
		flags := helpFlags(t, cmd)
		for long, short := range flags {
			total++
			named := regexp.MustCompile(`--` + regexp.QuoteMeta(long) + `\b`).MatchString(doc)
			if !named && short != "" {
				named = regexp.MustCompile(`(^|[\s\x60(\[])-` + short + `([\s\x60=]|$)`).MatchString(doc)
			}
			if !named {
				t.Errorf("rdggen help %s prints --%s, which docs/%s.md does not name", cmd, long, pages[0])
			}
		}
	}
	if total < 100 {
		t.Errorf("only %d flags read from the helps: the help's Flags: section was not parsed", total)
	}
	t.Logf("%d flags of %d commands, each named on its docs page", total, len(docPages))
}

// The help says what the tool does (the newcomer's findings): the main
// usage names --torchrun and bench's -o; check names the Cumulus switches'
// checks beside ONYX's and has no --vm-tools-timeout (it creates no VM);
// run's SSH flags reach only the VMs.
func TestHelpMatchesTool(t *testing.T) {
	_, main, _ := rdggen(t, "--help")
	for _, want := range []string{"[--mpirun | --torchrun]", "rdggen bench -f cluster.yaml [-o json]", "validate, apply, check and bench", "docs/"} {
		if !strings.Contains(main, want) {
			t.Errorf("rdggen --help lacks %q", want)
		}
	}
	_, check, _ := rdggen(t, "help", "check")
	if strings.Contains(check, "each switch over SSH") || !strings.Contains(check, "NVUE REST API") {
		t.Errorf("rdggen help check describes the switches as SSH only:\n%s", check)
	}
	if _, ok := helpFlags(t, "check")["vm-tools-timeout"]; ok {
		t.Error("rdggen help check lists --vm-tools-timeout")
	}
	if _, ok := helpFlags(t, "apply")["vm-tools-timeout"]; !ok {
		t.Error("rdggen help apply lacks --vm-tools-timeout")
	}
	_, run, _ := rdggen(t, "help", "run")
	_, flags, _ := strings.Cut(run, "\nFlags:\n")
	for _, l := range strings.Split(flags, "\n") {
		if m := helpFlag.FindStringSubmatch(l); m != nil && slices.Contains([]string{"known-hosts", "identity", "ssh-timeout"}, m[2]) && strings.Contains(l, "switch") {
			t.Errorf("rdggen help run: %s", strings.TrimSpace(l))
		}
	}
	if !strings.Contains(run, "known_hosts FILE that SSH host keys must match, VMs") {
		t.Errorf("rdggen help run: --known-hosts does not say it is for the VMs:\n%s", flags)
	}
}

// docCommand matches an rdggen command line in the manual: at the start of
// a line of a block (after "$ " or variable assignments), or as an inline
// code span.
var (
	docCommandLine = regexp.MustCompile(`^(?:\$ )?(?:[A-Z_]+=\S* )*(rdggen(?: .*)?)$`)
	docCommandSpan = regexp.MustCompile("`(rdggen [^`]*)`")
)

// docFlagsOf returns the command an rdggen command line runs and the
// flags it gives, long ("--dry-run") and short ("-f"); the job's command
// after "--", redirections, pipes, comments and what follows are not
// rdggen's.
func docFlagsOf(line string) (string, []string) {
	fields := strings.Fields(line)[1:]
	if len(fields) > 0 && strings.HasSuffix(fields[0], ":") {
		return "", nil // rdggen's own output ("rdggen run: …"), not a command
	}
	cmd := "generate"
	var flags []string
	for i, f := range fields {
		if f == "--" || f == "#" || strings.ContainsAny(f[:1], "|>;&<") || f == "&&" || f == "||" {
			break
		}
		f = strings.Trim(f, "[]|(),")
		switch {
		case i == 0 && docPages[f] != nil:
			cmd = f
		case i == 0 && f == "help":
			return "", nil // help's argument is a command
		case strings.HasPrefix(f, "--") && len(f) > 2:
			name, _, _ := strings.Cut(f, "=")
			flags = append(flags, name)
		case len(f) == 2 && f[0] == '-' && f[1] != '-':
			flags = append(flags, f)
		}
	}
	return cmd, flags
}

// Every rdggen command the manual shows — in a block, run or not (most need
// machines), or inline in the text — names only flags the command has, so
// that a renamed or removed flag cannot linger in the documentation. A
// block that fails on purpose (doc-test: exit N) is TestDocs's to check.
func TestDocsCommandsUseRealFlags(t *testing.T) {
	known := map[string]map[string]bool{}
	for cmd := range docPages {
		k := map[string]bool{"--help": true, "-h": true}
		for long, short := range helpFlags(t, cmd) {
			k["--"+long] = true
			if short != "" {
				k["-"+short] = true
			}
		}
		known[cmd] = k
	}
	known["generate"]["--version"] = true // rdggen --version is rdggen version
	seen := 0
	for _, f := range docFiles(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f, "../../")
		// A block that shows an error on purpose (doc-test: exit N, N > 0)
		// may name a flag the command refuses.
		failing := map[int]bool{}
		blocks, err := parseDocBlocks(name, string(src))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			for k := 0; b.exit != 0 && k <= len(b.body); k++ {
				failing[b.line+k] = true
			}
		}
		for i, l := range strings.Split(string(src), "\n") {
			if failing[i+1] {
				continue
			}
			var lines []string
			if m := docCommandLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				lines = append(lines, m[1])
			}
			for _, m := range docCommandSpan.FindAllStringSubmatch(l, -1) {
				lines = append(lines, m[1])
			}
			for _, line := range lines {
				cmd, flags := docFlagsOf(line)
				if cmd == "" {
					continue
				}
				seen++
				for _, fl := range flags {
					if !known[cmd][fl] {
						t.Errorf("%s:%d: rdggen %s has no flag %s: %s", name, i+1, cmd, fl, line)
					}
				}
			}
		}
	}
	t.Logf("%d rdggen command lines in the manual, every flag checked", seen)
	if seen < 100 {
		t.Errorf("only %d rdggen command lines found", seen)
	}
}
