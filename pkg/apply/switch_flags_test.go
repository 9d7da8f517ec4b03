package apply_test

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/apply"
)

// stdFlags is the standard library's *flag.FlagSet as an apply.FlagSet:
// Changed is whether Visit (the flags given) visits the flag.
type stdFlags struct{ *flag.FlagSet }

func (f stdFlags) Changed(name string) bool {
	given := false
	f.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

// The switch target's command line is any apply.FlagSet, not only the
// CLI's pflag: on the standard library's flag package, each OS's flags
// get their defaults, a given flag wins over its variable and a variable
// fills a flag not given, and Check refuses a value that makes no sense.
func TestSwitchFlagsStandardFlag(t *testing.T) {
	parse := func(args ...string) *apply.SwitchFlags {
		t.Helper()
		fs := flag.NewFlagSet("apply", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		sf := apply.NewSwitchFlags(stdFlags{fs})
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return sf
	}
	env := apply.SwitchEnv{Getenv: func(k string) string {
		return map[string]string{"RDGGEN_SWITCH_USER": "env-user", "RDGGEN_NVUE_PASSWORD": "pw"}[k]
	}}

	o := parse().Options(env, apply.Common{})
	if o.BackupDir != "rdg-backup" || o.SSH.User != "env-user" || o.SSH.Port != 22 || o.Batch != 256 || o.NVUE.Port != 8765 || o.NVUE.User != "cumulus" || o.NVUE.Password != "pw" {
		t.Errorf("no flags: backup %q, SSH %q port %d, batch %d, NVUE %q port %d password %q",
			o.BackupDir, o.SSH.User, o.SSH.Port, o.Batch, o.NVUE.User, o.NVUE.Port, o.NVUE.Password)
	}
	o = parse("--switch-user", "ops", "--nvue-port", "9443", "--backup-dir", "bk").Options(env, apply.Common{})
	if o.SSH.User != "ops" || o.NVUE.Port != 9443 || o.BackupDir != "bk" {
		t.Errorf("--switch-user ops --nvue-port 9443 --backup-dir bk: SSH user %q, NVUE port %d, backup %q", o.SSH.User, o.NVUE.Port, o.BackupDir)
	}
	if err := parse("--switch-batch", "0").Check(); err == nil || !strings.Contains(err.Error(), "--switch-batch 0: must be at least 1") {
		t.Errorf("--switch-batch 0: %v", err)
	}
}
