package horovod

import (
	_ "embed"
	"net/netip"
	"regexp"
	"strings"
	"text/template"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

//go:embed run.sh.tmpl
var runScriptText string

// runScript is run.sh as a template: the script reads as a script, and every
// value from the inventory goes through q (shellQuote) or comes as an
// already quoted line (shellJoin) — or is held to a grammar at validation
// (names, addresses).
var runScript = template.Must(template.New("run.sh").Funcs(template.FuncMap{"q": shellQuote}).Parse(runScriptText))

// runWorker is one host's line of run.sh's tables.
type runWorker struct {
	Short, Name string
	Address     netip.Addr
	Data        netip.Addr
	GID         string
	Slots       int
}

// torchrunNode is one host's arm of run.sh's torchrun table.
type torchrunNode struct{ Short, GID, Env, Args string }

// RunScript is horovod/run.sh: `worker` starts the worker container on the
// host it runs on and checks its address against the hostfile; `launch` runs
// horovodrun in the local worker; `mpirun` runs the equivalent mpirun line
// (both read every host's GID index first, and take an optional command for
// the ranks); `hostfile` prints the hostfile. With horovod.launcher:
// torchrun it also has `torchrun SCRIPT ARG...`, run on every host at once:
// that host's TorchrunArgs line in its worker, with torchrunEnv and the GID
// index it reads in its own worker.
func RunScript(inv *inventory.Inventory) []byte {
	var workers []runWorker
	for _, w := range Workers(inv) {
		workers = append(workers, runWorker{Short: shortName(w.Host.Name), Name: w.Host.Name, Address: w.Address,
			Data: w.Host.Data.Address.Addr(), GID: SysfsGID(w.Host.Data.Address.Addr()), Slots: w.Slots})
	}
	var execEnv []string
	for _, e := range Env(inv) {
		execEnv = append(execEnv, "-e", e.Name+"="+e.Value)
	}
	data := map[string]any{
		"Name": inv.Name, "File": inv.File, "Worker": WorkerName, "SSHPort": inv.Horovod.SSHPort, "Slots": TotalSlots(inv),
		"SSHDir": WorkerSSHDir, "ContainerSSHDir": ContainerSSHDir, "Hosts": shellQuote(HostList(inv)), "Benchmark": BenchmarkScript,
		"Workers": workers, "SSHDConfig": SSHDConfigName, "HostKey": HostKeyName, "AuthorizedKeys": AuthorizedKeyName,
		"ConfigLabel": ConfigLabel, "Hash": WorkerConfigHash(inv, WorkerSSHDir), "DockerRun": shellJoin(DockerRunArgs(inv)),
		"HostNetwork": inv.Horovod.Network == inventory.NetworkHost,
		"HCA":         inv.Horovod.HCA, "Port": RDMAPort, "GIDLookup": gidLookupScript(inv.Horovod.HCA),
		"RankWrapper": rankWrapperScript, "RankGIDVar": RankGIDVar, "GIDIndexVar": GIDIndexVar,
		"BenchmarkCmd": shellJoin(BenchmarkArgs()), "ExecEnv": shellJoin(execEnv),
		"Horovodrun": shellJoin(HorovodrunArgs(inv)), "Mpirun": shellJoin(MpirunArgs(inv)), "First": inv.Hosts[0].Name,
	}
	if inv.Horovod.Launcher == inventory.LauncherTorchrun {
		var nodes []torchrunNode
		for i := range inv.Hosts {
			var env []string
			for _, e := range torchrunEnv(inv, i) {
				env = append(env, "-e", e.Name+"="+e.Value)
			}
			h := &inv.Hosts[i]
			nodes = append(nodes, torchrunNode{Short: shortName(h.Name), GID: SysfsGID(h.Data.Address.Addr()),
				Env: shellJoin(env), Args: shellJoin(must(TorchrunArgs(inv, i, []string{"${CMD[@]}"})))})
		}
		data["Torchrun"], data["TorchrunWorld"], data["Rendezvous"] = nodes, TorchrunWorldSize(inv), must(RendezvousAddress(inv))
	}
	var b strings.Builder
	if err := runScript.Execute(&b, data); err != nil {
		panic("horovod: run.sh template: " + err.Error()) // the template and its data are fixed
	}
	return []byte(b.String())
}

// must is v of a call that cannot fail here: RunScript's inventory has
// hosts (it names the first one above) and its nodes are their indexes.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// shortName is what `hostname -s` prints for a host name.
func shortName(name string) string {
	short, _, _ := strings.Cut(name, ".")
	return short
}

var (
	shellVar   = regexp.MustCompile(`^\$\{[A-Z_]+\}$`)
	shellArray = regexp.MustCompile(`^\$\{([A-Z_]+)\[@\]\}$`)
)

// shellQuote quotes one word for POSIX sh (quote.Sh); a bare ${NAME}, one of
// run.sh's own variables, stays expandable, and ${NAME[@]}, one of its bash
// arrays, expands to its elements (written so that an empty array is no
// error under set -u in bash 4.3, Ubuntu 16.04's).
func shellQuote(s string) string {
	if shellVar.MatchString(s) {
		return `"` + s + `"`
	}
	if m := shellArray.FindStringSubmatch(s); m != nil {
		return `${` + m[1] + `[@]+"${` + m[1] + `[@]}"}`
	}
	return quote.Sh(s)
}

// shellJoin quotes and joins argv into one shell command line.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
