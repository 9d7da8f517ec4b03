package workerapply

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Check names of the workers target, in the order they are reported.
const (
	CheckWorker     = "worker"         // the container as apply would leave it
	CheckSSHD       = "sshd"           // sshd answers on the worker port with the cluster's host key
	CheckInterfaces = "interfaces"     // NCCL_SOCKET_IFNAME's interfaces exist in the container
	CheckDevices    = "devices"        // /dev/infiniband in the container has the verbs device
	CheckMemlock    = "memlock"        // ulimit -l in the container is unlimited
	CheckGDRLevel   = "gdr-level"      // NCCL_NET_GDR_LEVEL in the container is horovod.GDRLevel
	CheckSource     = "source-address" // a peer's sshd sees this worker's own address
	CheckPeerRules  = "peer-rules"     // the NAT exemption, routes and accept rules decide every pair
)

// peerConnectTimeout bounds each worker-to-worker connection, seconds.
const peerConnectTimeout = 5

// peersAtOnce bounds the logins one worker runs at once. With every worker
// logging in at the same time (--all-pairs, in rotation order), a worker's
// sshd receives about as many at once, and sshd refuses unauthenticated
// connections beyond its MaxStartups start value, 10 by default (the client
// sees "kex_exchange_identification: Connection reset by peer";
// sshd_config(5), https://man.openbsd.org/sshd_config#MaxStartups): 8 stays
// below it.
const peersAtOnce = 8

// peer is another host's worker.
type peer struct {
	Index   int
	Name    string
	Address netip.Addr
}

// Check is `rdggen check --target workers`: per VM, over one SSH round trip
// that changes nothing, apply's probe of the worker container (its
// differences become failures), whether its sshd answers with the cluster's
// host key, whether the interfaces NCCL_SOCKET_IFNAME names exist in it,
// the RDMA devices, memlock and GDR level inside it, and between the
// workers (newSchedule, in peers.go) the logins of the ring, or of every
// pair with AllPairs, each from one `docker exec` per worker: the source
// address a peer's sshd saw must be the worker's own address (a translated
// source is what breaks Open MPI between hosts; when it is not, the host's
// nat POSTROUTING says why), and the rule check (CheckPeerRules) for every
// pair. It ends with the schedule on Out: "64 workers: 64 login(s) along a
// ring …; 4,032 of 4,032 pairs covered by the rule check". With
// horovod.launcher: torchrun, every worker also connects to the rendezvous
// endpoint (checkRendezvous). DryRun, Gate and ReadyTimeout are ignored. The
// error names the hosts that could not be read.

func Check(ctx context.Context, inv *inventory.Inventory, o Options) ([]readiness.Result, error) {
	n := len(inv.Hosts)
	peers := make([]peer, n)
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		peers[i] = peer{Index: i, Name: h.Name, Address: horovod.WorkerAddress(inv, h)}
	}
	s := newSchedule(n, o.AllPairs)
	verdicts := make([]ruleVerdict, n)
	rs, err := driver.CheckEach(inv.Hosts, o.Parallel, o.Track, fmt.Sprintf("checking %d worker(s): %s, the rule check for all %s pair(s)", n, s.describe(), thousands(n*(n-1))),
		func(h *inventory.Host) []readiness.Result {
			to := make([]peer, 0, len(s.out[h.Index]))
			for _, j := range s.out[h.Index] {
				to = append(to, peers[j])
			}
			others := slices.Delete(slices.Clone(peers), h.Index, h.Index+1)
			out, v := checkWorker(ctx, inv, &o, h, others, to)
			verdicts[h.Index] = v
			return out
		})
	if o.Out != nil && n > 1 {
		covered := fmt.Sprintf("%s of %s pairs covered by the rule check", thousands(coveredPairs(verdicts)), thousands(n*(n-1)))
		if inv.Horovod.Network == inventory.NetworkHost {
			covered = "horovod.network: host, so no container routes, NAT or forwarding rules between the workers to check"
		}
		fmt.Fprintf(o.Out, "%d workers: %s; %s\n", n, s.describe(), covered)
	}
	if inv.Horovod.Launcher == inventory.LauncherTorchrun {
		rs = append(rs, checkRendezvous(ctx, inv, &o)...)
	}
	return rs, err
}

// checkWorker checks host h's worker; others are every other host's worker,
// logins those h's worker logs in to.
func checkWorker(ctx context.Context, inv *inventory.Inventory, o *Options, h *inventory.Host, others, logins []peer) ([]readiness.Result, ruleVerdict) {
	const target = readiness.TargetWorkers
	unsure := func(err error) ([]readiness.Result, ruleVerdict) {
		return driver.Unread(target, h.Name, err), ruleVerdict{}
	}
	conn, err := o.Dial(ctx, h)
	if err != nil {
		return unsure(remote.DialError(err))
	}
	defer conn.Close()
	d := desiredFor(inv, h, o.Keys, o.rootFor(h))
	w := remote.NewScript(d.Root).WithTemp()
	probe(w, d)
	peersScript(w)
	workerProbe(w, d, logins)
	if !d.HostNetwork {
		rulesProbe(w, others)
	}
	stdout, _, err := conn.Run(ctx, w.End())
	if err != nil {
		return unsure(err)
	}
	rs, err := remote.ParseResults(stdout, w.Nonce())
	if err != nil {
		return unsure(err)
	}
	st, err := parseState(rs)
	if err != nil {
		return unsure(err)
	}
	byName := map[string]remote.Result{}
	for _, r := range rs {
		byName[r.Name] = r
	}
	names := append([]string{"ifaces", "inside"}, loginNames(len(logins))...)
	parts := parseParts(byName["worker"], workerMark(w), names)
	for _, name := range names[:2] {
		byName[name] = remote.Result{Name: name, Status: strconv.Itoa(parts[name].rc), Data: []byte(parts[name].text)}
	}
	fixApply := "rdggen apply --target workers"
	rules, verdict, ruleWhy := peerRules(inv, h, d, byName, others)

	var out []readiness.Result
	// The container, as apply would leave it (its sshd is the next check).
	p, err := makePlan(d, st)
	if err != nil {
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckWorker, Subject: horovod.WorkerName, Status: readiness.Failed, Found: err.Error(), Expected: "the worker at " + d.Address.String(), Fix: "do what the message says, then " + fixApply})
	} else {
		var diffs []string
		for _, c := range p.changes() {
			if c.Op == "run" && c.To == actRestart && strings.HasPrefix(c.From, "its sshd ") {
				continue
			}
			diffs = append(diffs, strings.TrimSpace(strings.TrimLeft(c.Text, "+~-")))
		}
		if len(diffs) > 0 {
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckWorker, Subject: horovod.WorkerName, Status: readiness.Failed, Found: strings.Join(diffs, "; "), Expected: fmt.Sprintf("%s running %s with configuration %s", horovod.WorkerName, d.Image, d.Hash), Fix: fixApply})
		} else {
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckWorker, Subject: horovod.WorkerName, Status: readiness.Passed, Found: fmt.Sprintf("running %s, configuration %s", d.Image, d.Hash)})
		}
	}
	running := st.Container != nil && st.Container.State.Running

	// sshd on the worker port, with the cluster's host key.
	where := fmt.Sprintf("%s port %d", d.Address, d.Port)
	switch key := keyscanKey(st.Keyscan); {
	case !running:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSSHD, Subject: where, Status: readiness.Failed, Found: horovod.WorkerName + " is not running", Expected: "sshd answering", Fix: fixApply})
	case key == "":
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSSHD, Subject: where, Status: readiness.Failed, Found: "no answer", Expected: "sshd answering with the cluster's host key " + Fingerprint([]byte(d.HostKey)), Fix: fixApply + " (it restarts the worker; docker logs " + horovod.WorkerName + " says why sshd stopped)"})
	case key != d.HostKey:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSSHD, Subject: where, Status: readiness.Failed, Found: "host key " + Fingerprint([]byte(key)), Expected: "the cluster's host key " + Fingerprint([]byte(d.HostKey)), Fix: fixApply})
	default:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSSHD, Subject: where, Status: readiness.Passed, Found: "cluster host key " + Fingerprint([]byte(key))})
	}
	if !running {
		why := horovod.WorkerName + " is not running"
		for _, c := range []string{CheckInterfaces, CheckDevices, CheckMemlock, CheckGDRLevel} {
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: c, Subject: "", Status: readiness.Unknown, Found: why})
		}
		for _, pr := range logins {
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSource, Subject: "to " + pr.Name, Status: readiness.Unknown, Found: why})
		}
		return append(out, rules...), verdict
	}

	// The interfaces NCCL_SOCKET_IFNAME names for this worker.
	want := []string{horovod.ContainerInterface}
	if d.HostNetwork {
		want = []string{h.DataInterface}
	}
	if r, ok := byName["ifaces"]; !ok || r.RC() != 0 {
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckInterfaces, Subject: "", Status: readiness.Unknown, Found: "cannot list the worker's interfaces: " + remote.FirstLine(string(r.Data))})
	} else {
		have := strings.Fields(string(r.Data))
		var missing []string
		for _, x := range want {
			if !slices.Contains(have, x) {
				missing = append(missing, x)
			}
		}
		if len(missing) > 0 {
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckInterfaces, Subject: "NCCL_SOCKET_IFNAME", Status: readiness.Failed, Found: "no " + strings.Join(missing, ", ") + " in " + horovod.WorkerName + " (it has " + strings.Join(have, ", ") + ")", Expected: strings.Join(want, ", ") + " (NCCL_SOCKET_IFNAME, Open MPI's btl_tcp_if_include)", Fix: "set hosts[].data_interface to the VM's data interface, or horovod.network to the worker's network mode"})
		} else {
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckInterfaces, Subject: "NCCL_SOCKET_IFNAME", Status: readiness.Passed, Found: strings.Join(want, ", ") + " present"})
		}
	}

	out = append(out, checkInside(h, byName["inside"])...)

	// From this worker to the peers it logs in to: the source address the peer saw.
	natWhy := ""
	if !d.HostNetwork {
		natWhy = natProblem(byName["postrouting"], h)
	}
	for i, pr := range logins {
		r := parts[names[2+i]]
		subject := "to " + pr.Name
		text := r.text
		expected := d.Address.String() + " (this worker's own address)"
		fixNAT := "on " + h.Name + ": run " + dockernet.FirewallScriptPath + " (or rdggen apply --target hosts) to put the NAT exemption " + dockernet.NATChain + " back first in nat POSTROUTING"
		if r.rc != 0 {
			found := "no login to " + pr.Name + "'s worker at " + pr.Address.String() + ": " + remote.OneLine(text)
			fix := "check " + pr.Name + "'s worker (rdggen check --target workers) and the routes and firewall of both hosts (rdggen check --target hosts)"
			switch why := ruleWhy[pr.Name]; {
			case natWhy != "":
				found += "; " + natWhy
				fix = fixNAT
			case len(why) > 0:
				found += "; " + strings.Join(why, "; ")
				fix = fixRules(h)
			}
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSource, Subject: subject, Status: readiness.Failed, Found: found, Expected: expected, Fix: fix})
			continue
		}
		src := strings.Fields(lastLine(text))
		switch {
		case len(src) == 0:
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSource, Subject: subject, Status: readiness.Unknown, Found: "the peer printed no SSH_CONNECTION: " + remote.OneLine(text)})
		case src[0] != d.Address.String():
			found := pr.Name + "'s sshd saw " + src[0]
			if a, err := netip.ParseAddr(src[0]); err == nil && a == h.Data.Address.Addr() {
				found += " (" + h.Name + "'s data address: the source was translated)"
			}
			if natWhy != "" {
				found += "; " + natWhy
			}
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSource, Subject: subject, Status: readiness.Failed, Found: found, Expected: expected, Fix: fixNAT})
		default:
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckSource, Subject: subject, Status: readiness.Passed, Found: pr.Name + "'s sshd saw " + src[0]})
		}
	}
	return append(out, rules...), verdict
}

// peerRules is host h's CheckPeerRules result (none without peers) and its
// verdict for coveredPairs: its NAT exemption, routes and accept rules
// judged for every peer's worker (judgeRules). With horovod.network: host
// the workers use the data addresses and no such rule applies.
// The third result is, per peer name, why the rules do not admit it.
func peerRules(inv *inventory.Inventory, h *inventory.Host, d *desired, byName map[string]remote.Result, others []peer) ([]readiness.Result, ruleVerdict, map[string][]string) {
	const target = readiness.TargetWorkers
	v := ruleVerdict{read: true}
	if len(others) == 0 {
		return nil, v, nil
	}
	subject := "with " + thousands(len(others)) + " peer(s)"
	if d.HostNetwork {
		return []readiness.Result{readiness.Result{Target: target, Machine: h.Name, Check: CheckPeerRules, Subject: subject, Status: readiness.Passed, Found: "horovod.network: host: the workers use the data addresses, no container route, NAT or forwarding rule applies"}}, v, nil
	}
	var p problems
	v.bad, p = judgeRules(inv, h, d.Address, byName, others)
	if len(p.order) == 0 {
		via := "their data addresses"
		if inv.Docker.SwitchRouted() {
			via = "the switch at " + dockernet.PoolRoute(inv, h).Via.String()
		}
		return []readiness.Result{readiness.Result{Target: target, Machine: h.Name, Check: CheckPeerRules, Subject: subject, Status: readiness.Passed, Found: fmt.Sprintf(
			"to every peer's worker untranslated (%s) via %s on %s; new connections from them accepted (%s)",
			dockernet.NATChain, via, h.DataInterface, dockernet.FirewallChain)}}, v, nil
	}
	if p.unsure {
		return []readiness.Result{readiness.Result{Target: target, Machine: h.Name, Check: CheckPeerRules, Subject: subject, Status: readiness.Unknown, Found: p.String()}}, v, p.why
	}
	return []readiness.Result{readiness.Result{Target: target, Machine: h.Name, Check: CheckPeerRules, Subject: subject, Status: readiness.Failed, Found: p.String(), Expected: "rdggen's NAT exemption, route and accept rule for every peer's worker", Fix: fixRules(h)}}, v, p.why
}

// fixRules is the fix of a rule check failure on host h.
func fixRules(h *inventory.Host) string {
	return "on " + h.Name + ": run " + dockernet.FirewallScriptPath + " (or rdggen apply --target hosts, which also installs the routes)"
}

// checkInside judges the "inside" part of scripts/worker.sh: the RDMA devices, memlock
// and the GDR level inside the worker.
func checkInside(h *inventory.Host, r remote.Result) []readiness.Result {
	const target = readiness.TargetWorkers
	if r.Name == "" || r.RC() != 0 {
		why := "cannot run a shell in " + horovod.WorkerName + ": " + remote.FirstLine(string(r.Data))
		return []readiness.Result{readiness.Result{Target: target, Machine: h.Name, Check: CheckDevices, Subject: "", Status: readiness.Unknown, Found: why},
			readiness.Result{Target: target, Machine: h.Name, Check: CheckMemlock, Subject: "", Status: readiness.Unknown, Found: why}, readiness.Result{Target: target, Machine: h.Name, Check: CheckGDRLevel, Subject: "", Status: readiness.Unknown, Found: why}}
	}
	var devs []string
	memlock, gdr := "", ""
	for _, l := range strings.Split(string(r.Data), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(l), " ")
		switch k {
		case "memlock":
			memlock = v
		case "gdr":
			gdr = v
		case "dev":
			devs = append(devs, v)
		}
	}
	fixRun := "rdggen apply --target workers (it starts " + horovod.WorkerName + " with --device=/dev/infiniband --cap-add=IPC_LOCK --ulimit memlock=-1)"
	var out []readiness.Result
	hasVerbs := slices.ContainsFunc(devs, func(d string) bool { return strings.HasPrefix(d, "uverbs") })
	switch {
	case hasVerbs:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckDevices, Subject: "/dev/infiniband", Status: readiness.Passed, Found: strings.Join(devs, ", ")})
	case len(devs) == 0:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckDevices, Subject: "/dev/infiniband", Status: readiness.Failed, Found: "no /dev/infiniband in " + horovod.WorkerName + ": NCCL falls back to sockets", Expected: "the VF's verbs device (uverbsN)", Fix: fixRun + "; on " + h.Name + " itself /dev/infiniband must exist (mlx5_ib, rdma-core or MLNX_OFED)"})
	default:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckDevices, Subject: "/dev/infiniband", Status: readiness.Failed, Found: strings.Join(devs, ", ") + ", no uverbsN", Expected: "the VF's verbs device (uverbsN)", Fix: "load the RDMA userspace access module on " + h.Name + " (modprobe ib_uverbs), then " + fixRun})
	}
	if memlock == "unlimited" {
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckMemlock, Subject: "", Status: readiness.Passed, Found: "ulimit -l unlimited"})
	} else {
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckMemlock, Subject: "", Status: readiness.Failed, Found: "ulimit -l " + memlock + " KiB: NCCL cannot register its buffers (ibv_reg_mr: Cannot allocate memory)", Expected: "unlimited", Fix: fixRun})
	}
	if gdr == horovod.GDRLevel {
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGDRLevel, Subject: "NCCL_NET_GDR_LEVEL", Status: readiness.Passed, Found: gdr})
	} else {
		found := "NCCL_NET_GDR_LEVEL unset: NCCL's default PXB turns GPUDirect RDMA off in a VM (GPU and VF are PHB apart)"
		if gdr != "" {
			found = "NCCL_NET_GDR_LEVEL=" + gdr
		}
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGDRLevel, Subject: "NCCL_NET_GDR_LEVEL", Status: readiness.Failed, Found: found, Expected: horovod.GDRLevel, Fix: "rdggen apply --target workers (the worker's environment has it; rdggen run and run.sh pass it to every rank)"})
	}
	return out
}

// natProblem says why nat POSTROUTING on host h would translate its
// containers' traffic to the other hosts ("" when the exemption's jump is
// the first rule, or the table could not be read).
func natProblem(r remote.Result, h *inventory.Host) string {
	if r.Name == "" || r.RC() != 0 {
		return ""
	}
	var rules []string
	for _, l := range strings.Split(string(r.Data), "\n") {
		if strings.HasPrefix(l, "-A ") {
			rules = append(rules, strings.TrimSpace(l))
		}
	}
	switch {
	case len(rules) > 0 && rules[0] == dockernet.NATJump:
		return ""
	case len(rules) == 0 || !slices.Contains(rules, dockernet.NATJump):
		return h.Name + "'s nat POSTROUTING has no jump to " + dockernet.NATChain + ", so Docker's MASQUERADE translates its containers' traffic"
	}
	return fmt.Sprintf("%s's nat POSTROUTING starts with %q, before the jump to %s", h.Name, rules[0], dockernet.NATChain)
}

// firewallJumpProblem says why DOCKER-USER on host h does not send new
// connections to its containers through FirewallChain first ("" when its
// first rule is the jump); r is `iptables -S DOCKER-USER`.
func firewallJumpProblem(r remote.Result, h *inventory.Host) string {
	rules := chainRules(string(r.Data))
	switch {
	case len(rules) > 0 && rules[0].text == dockernet.FirewallJump:
		return ""
	case !slices.ContainsFunc(rules, func(x ipRule) bool { return x.text == dockernet.FirewallJump }):
		return h.Name + "'s " + dockernet.DockerUserChain + " has no jump to " + dockernet.FirewallChain + ", so rdggen's accept rules do not decide new connections to its containers"
	}
	return fmt.Sprintf("%s's %s starts with %q, before the jump to %s", h.Name, dockernet.DockerUserChain, rules[0].text, dockernet.FirewallChain)
}

// lastLine is s's last non-empty line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
