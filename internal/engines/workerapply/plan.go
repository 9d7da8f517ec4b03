package workerapply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// desired is one host's worker as it should be.
type desired struct {
	Host *inventory.Host
	// Root is the host's root prefix ("" for none).
	Root string
	// Dir is the SSH files' directory as the host sees it (Root + WorkerSSHDir).
	Dir   string
	Files []horovod.WorkerFile
	// Run is the `docker run` argv; Hash its configuration label.
	Run  []string
	Hash string
	// Image is the worker image; HostNetwork the worker's network mode.
	Image       string
	HostNetwork bool
	// Address is where the hostfile says the worker is; Port its sshd port.
	Address netip.Addr
	Port    int
	// HostKey is the workers' host key in authorized_keys form.
	HostKey string
}

func desiredFor(inv *inventory.Inventory, h *inventory.Host, k horovod.WorkerKeys, root string) *desired {
	dir := root + horovod.WorkerSSHDir
	return &desired{
		Host: h, Root: root, Dir: dir,
		Files:       horovod.WorkerFiles(inv, k),
		Run:         horovod.WorkerRunArgs(inv, dir),
		Hash:        horovod.WorkerConfigHash(inv, dir),
		Image:       inv.Horovod.Image,
		HostNetwork: inv.Horovod.Network == inventory.NetworkHost,
		Address:     horovod.WorkerAddress(inv, h),
		Port:        inv.Horovod.SSHPort,
		HostKey:     strings.TrimSpace(string(k.HostPublic)),
	}
}

// probe appends the read-only part (scripts/probe.sh): docker's version, the SSH directory's
// mode, each SSH file's mode and SHA-256 (never a private key's bytes), the
// worker container, the image, and — when the worker runs — the host key its
// sshd presents at the hostfile's address (ssh-keyscan, up to 3 tries of 4 s).
func probe(w *remote.Script, d *desired) {
	w.Set("ssh_dir", horovod.WorkerSSHDir)
	w.Set("worker", horovod.WorkerName)
	w.Set("image", d.Image)
	w.Set("port", strconv.Itoa(d.Port))
	w.Set("addr", d.Address.String())
	w.Text(script("probe.sh"))
	var names []string
	for _, f := range d.Files {
		names = append(names, f.Name)
	}
	w.Line("probe_worker", remote.Words(names))
}

// fileState is an SSH file as the probe found it.
type fileState struct {
	Mode fs.FileMode
	Sum  string
}

// container is the part of `docker inspect` the plan looks at.
type container struct {
	Config struct {
		Image  string
		Labels map[string]string
	}
	State struct {
		Status     string
		Running    bool
		ExitCode   int
		Error      string
		Restarting bool
	}
	RestartCount    int
	NetworkSettings struct{ IPAddress string }
	HostConfig      struct{ NetworkMode string }
}

// workerState is a host as the probe saw it.
type workerState struct {
	Docker    string // server version
	DirMode   fs.FileMode
	DirExists bool
	Files     map[string]fileState
	Container *container // nil: none
	Image     bool       // the image is on the host
	Keyscan   *string    // nil: not run (the worker does not run)
}

func parseState(rs []remote.Result) (*workerState, error) {
	st := &workerState{Files: map[string]fileState{}}
	seen := map[string]remote.Result{}
	for _, r := range rs {
		seen[r.Name] = r
	}
	for _, name := range []string{"docker", "dir", "files", "inspect", "image"} {
		if _, ok := seen[name]; !ok {
			return nil, fmt.Errorf("probe: no %q result", name)
		}
	}
	d := seen["docker"]
	if d.RC() != 0 {
		return nil, fmt.Errorf("docker does not answer: %s", remote.FirstLine(string(d.Data)))
	}
	st.Docker = strings.TrimSpace(string(d.Data))
	if dir := seen["dir"]; dir.RC() == 0 {
		m, err := strconv.ParseUint(strings.TrimSpace(string(dir.Data)), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("probe: bad directory mode %q", dir.Data)
		}
		st.DirExists, st.DirMode = true, fs.FileMode(m)
	}
	for _, l := range strings.Split(string(seen["files"].Data), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		m, err := strconv.ParseUint(f[1], 8, 32)
		if err != nil {
			return nil, fmt.Errorf("probe: bad file line %q", l)
		}
		st.Files[f[0]] = fileState{Mode: fs.FileMode(m), Sum: f[2]}
	}
	if in := seen["inspect"]; in.RC() == 0 {
		var cs []container
		if err := json.Unmarshal(in.Data, &cs); err != nil || len(cs) != 1 {
			return nil, fmt.Errorf("probe: docker inspect %s: unexpected output: %s", horovod.WorkerName, remote.FirstLine(string(in.Data)))
		}
		st.Container = &cs[0]
	} else if !strings.Contains(strings.ToLower(string(in.Data)), "no such") {
		return nil, fmt.Errorf("docker inspect %s: %s", horovod.WorkerName, remote.FirstLine(string(in.Data)))
	}
	st.Image = seen["image"].RC() == 0
	if ks, ok := seen["keyscan"]; ok {
		s := string(ks.Data)
		st.Keyscan = &s
	}
	return st, nil
}

// Container actions, at most one per host.
const (
	actCreate   = "create"
	actRecreate = "re-create"
	actStart    = "start"
	actRestart  = "restart"
)

// plan is the difference between a host's worker and the desired one.
type plan struct {
	d      *desired
	dir    bool // create the directory or fix its mode
	files  []horovod.WorkerFile
	newF   map[string]bool
	action string
	why    string
	notes  []string
}

func (p *plan) empty() bool { return !p.dir && len(p.files) == 0 && p.action == "" }

// hostErrorf is a problem that stops one host before anything is changed on it.
func hostErrorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// makePlan compares st with d.
func makePlan(d *desired, st *workerState) (*plan, error) {
	p := &plan{d: d, newF: map[string]bool{}}
	if !st.DirExists || st.DirMode.Perm() != 0o700 {
		p.dir = true
	}
	sshdFiles := false
	for _, f := range d.Files {
		s, ok := st.Files[f.Name]
		if ok && s.Sum == sum(f.Data) && s.Mode.Perm() == f.Mode {
			continue
		}
		p.files = append(p.files, f)
		p.newF[f.Name] = !ok
		sshdFiles = sshdFiles || f.SSHD
	}
	if !st.Image {
		p.notes = append(p.notes, fmt.Sprintf("image %s is not on the host: docker run pulls it", d.Image))
	}

	c := st.Container
	switch {
	case c == nil:
		p.action, p.why = actCreate, fmt.Sprintf("%s, %s, sshd on port %d", d.Image, networkName(d.HostNetwork), d.Port)
	case c.Config.Labels[horovod.ConfigLabel] != d.Hash:
		was := c.Config.Labels[horovod.ConfigLabel]
		if was == "" {
			was = "none"
		}
		p.action, p.why = actRecreate, "configuration "+was+" -> "+d.Hash
		if c.Config.Image != d.Image {
			p.why += ", image " + c.Config.Image + " -> " + d.Image
		}
	case !c.State.Running || c.State.Restarting:
		p.action, p.why = actStart, fmt.Sprintf("it is %s (exit code %d)", c.State.Status, c.State.ExitCode)
		if c.State.Restarting {
			p.action, p.why = actRestart, fmt.Sprintf("it keeps restarting (%d restarts): its sshd does not stay up", c.RestartCount)
		}
	case sshdFiles:
		p.action, p.why = actRestart, "sshd's configuration or host key changed"
	default:
		if ip, err := netip.ParseAddr(c.NetworkSettings.IPAddress); !d.HostNetwork && (err != nil || !d.Host.Subnet.Contains(ip)) {
			return nil, hostErrorf("%s has address %s, outside the host's container subnet %s: docker0 does not have daemon.json's bip yet; run 'rdggen apply --target hosts' first (it restarts Docker)",
				horovod.WorkerName, orNone(c.NetworkSettings.IPAddress), d.Host.Subnet)
		}
		if !d.HostNetwork && c.NetworkSettings.IPAddress != d.Address.String() {
			return nil, hostErrorf("%s has address %s but the hostfile says %s: the worker must be the first container started on docker0; stop the other containers on docker0, remove %s (docker rm -f %s) and run apply again",
				horovod.WorkerName, orNone(c.NetworkSettings.IPAddress), d.Address, horovod.WorkerName, horovod.WorkerName)
		}
		switch key := keyscanKey(st.Keyscan); {
		case key == "":
			p.action, p.why = actRestart, fmt.Sprintf("its sshd does not answer on %s port %d", d.Address, d.Port)
		case key != d.HostKey:
			p.action, p.why = actRestart, fmt.Sprintf("its sshd on %s port %d presents host key %s, not the cluster's %s",
				d.Address, d.Port, Fingerprint([]byte(key)), Fingerprint([]byte(d.HostKey)))
		}
	}
	return p, nil
}

func networkName(host bool) string {
	if host {
		return "host network"
	}
	return "bridge network (docker0)"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// keyscanKey is the "ssh-ed25519 AAAA…" key in ssh-keyscan's output ("" when none).
func keyscanKey(out *string) string {
	if out == nil {
		return ""
	}
	for _, l := range strings.Split(*out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && !strings.HasPrefix(l, "#") && f[1] == "ssh-ed25519" {
			return f[1] + " " + f[2]
		}
	}
	return ""
}

// changes returns the plan's changes, typed, each with its line for a person.
func (p *plan) changes() []applyplan.Change {
	var out []applyplan.Change
	if p.dir {
		out = append(out, applyplan.Change{Op: applyplan.Update, Item: horovod.WorkerSSHDir, To: "directory, mode 0700",
			Text: fmt.Sprintf("~ %s: directory, mode 0700", horovod.WorkerSSHDir)})
	}
	for _, f := range p.files {
		op, sign := applyplan.Update, "~"
		if p.newF[f.Name] {
			op, sign = applyplan.Add, "+"
		}
		what, to := "", ""
		switch {
		case f.Secret:
			what = " (private key, never shown)"
		case f.Name == horovod.AuthorizedKeyName || f.Name == horovod.ClientKeyName+".pub":
			to = Fingerprint(f.Data)
			what = " (" + to + ")"
		}
		path := horovod.WorkerSSHDir + "/" + f.Name
		out = append(out, applyplan.Change{Op: op, Item: path, To: to, Text: fmt.Sprintf("%s %s%s", sign, path, what)})
	}
	item := "container " + horovod.WorkerName
	switch p.action {
	case actCreate:
		out = append(out, applyplan.Change{Op: applyplan.Add, Item: item, To: p.why, Text: fmt.Sprintf("+ %s: %s", item, p.why)})
	case "":
	default:
		out = append(out, applyplan.Change{Op: applyplan.Run, Item: item, To: p.action, From: p.why,
			Text: fmt.Sprintf("~ %s: %s (%s)", item, p.action, p.why)})
	}
	return out
}

// describe is the text of every change.
func (p *plan) describe() []string { return driver.Texts(p.changes()) }

// applyScript appends the plan's changes (scripts/apply.sh): the directory (0700, before any
// private key is written into it), the files, the container, and the wait
// for its sshd.
func applyScript(w *remote.Script, p *plan, o *Options) {
	w.Set("worker", horovod.WorkerName)
	w.Text(script("apply.sh"))
	dir := remote.RootPath(horovod.WorkerSSHDir)
	w.Line("umask 077")
	if p.dir {
		w.Line("step dir make_dir ", dir)
	}
	for _, f := range p.files {
		w.Line("step ", remote.Quote("file:"+f.Name), " put_file ", remote.RootPath(horovod.WorkerSSHDir+"/"+f.Name),
			" ", fmt.Sprintf("%o", f.Mode.Perm()), " ", w.Data(f.Data))
	}
	switch p.action {
	case actCreate:
		w.Line("step container", remote.Words(p.d.Run))
	case actRecreate:
		w.Line("step container recreate", remote.Words(p.d.Run))
	case actStart, actRestart:
		w.Line("step container docker ", p.action, " ", horovod.WorkerName)
	}
	if p.action != "" {
		w.Line("step ready wait_worker ", p.d.Address.String(), " ", strconv.Itoa(p.d.Port), " ",
			strconv.Itoa(int(o.ReadyTimeout.Seconds())), " ", remote.Quote(p.d.HostKey))
	}
}
