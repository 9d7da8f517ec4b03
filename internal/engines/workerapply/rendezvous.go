package workerapply

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// CheckRendezvous is torchrun's rendezvous endpoint (horovod.launcher:
// torchrun): a TCP connection from every worker to the first worker's
// address at horovod.rdzv_port.
const CheckRendezvous = "rendezvous"

// rendezvousWait bounds the listener: how long it waits for the workers'
// connections, seconds.
const rendezvousWait = 30

// rendezvousListener runs detached in the first worker with python3 (which
// torchrun needs there anyway): it writes its process ID to $5.pid, listens
// on every address at port $1,
// writes "listening" (or "busy <reason>" when the port is taken) to the file
// $5, answers each of up to $3 connections with "$2 <the source address it
// saw>" and stops after $4 seconds.
const rendezvousListener = `import socket, sys, time
port, token, n, wait, state = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
import os
with open(state + ".pid", "w") as f:
    f.write(str(os.getpid()))
def say(s):
    with open(state + ".new", "w") as f:
        f.write(s + "\n")
    os.rename(state + ".new", state)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("", port))
except OSError as e:
    say("busy " + e.strerror)
    sys.exit(3)
s.listen(64)
say("listening")
end = time.time() + wait
while n > 0 and time.time() < end:
    s.settimeout(max(end - time.time(), 0.1))
    try:
        c, a = s.accept()
    except socket.timeout:
        break
    c.sendall((token + " " + a[0] + "\n").encode())
    c.close()
    n -= 1
`

// rendezvousConnect runs in each worker: a TCP connection to $1:$2 within
// peerConnectTimeout seconds; it prints the line the listener sent, or
// "error <reason>".
const rendezvousConnect = `import socket, sys
try:
    c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=float(sys.argv[3]))
    print(c.makefile().readline().strip() or "connected")
except Exception as e:
    print("error", e)
`

// checkRendezvous proves torchrun's rendezvous endpoint reachable from every
// worker: it starts a listener on the endpoint in the first worker (over its
// own SSH session; it stops after the last connection, and is stopped after
// the probes, or by itself after rendezvousWait seconds), then connects to it from every worker, the first
// included. The listener answers with a random token and the source address
// it saw, which must be the connecting worker's own address. When the port
// is taken in the first worker (a job's rendezvous store), the connections
// are still made and say so. Results: one per host, check CheckRendezvous.
func checkRendezvous(ctx context.Context, inv *inventory.Inventory, o *Options) []readiness.Result {
	const target = readiness.TargetWorkers
	rdzv, err := horovod.RendezvousAddress(inv)
	if err != nil {
		return nil // no hosts: nothing to check
	}
	subject := "to " + rdzv.String()
	first := &inv.Hosts[0]
	all := func(r func(h *inventory.Host) readiness.Result) []readiness.Result {
		out := make([]readiness.Result, len(inv.Hosts))
		for i := range inv.Hosts {
			out[i] = r(&inv.Hosts[i])
		}
		return out
	}
	unsure := func(why string) []readiness.Result {
		return all(func(h *inventory.Host) readiness.Result {
			return readiness.Result{Target: target, Machine: h.Name, Check: CheckRendezvous, Subject: subject, Status: readiness.Unknown, Found: why}
		})
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	token := "rdggen-rendezvous-" + hex.EncodeToString(nonce[:])

	conn, err := o.Dial(ctx, first)
	if err != nil {
		return unsure(fmt.Sprintf("cannot reach %s to listen on the endpoint: %v", first.Name, remote.DialError(err)))
	}
	stateFile := "/tmp/" + token
	script := "docker exec -d " + horovod.WorkerName + " python3 -c " + remote.Quote(rendezvousListener) + " " +
		strconv.Itoa(int(rdzv.Port())) + " " + token + " " + strconv.Itoa(len(inv.Hosts)) + " " + strconv.Itoa(rendezvousWait) + " " + stateFile + " || exit 1\n" +
		"i=0; while [ $i -lt 50 ]; do s=$(docker exec " + horovod.WorkerName + " cat " + stateFile + " 2>/dev/null) && [ -n \"$s\" ] && { echo \"$s\"; exit 0; }; i=$((i+1)); sleep 0.2; done\n" +
		"echo \"no answer: python3 in " + horovod.WorkerName + " did not start listening within 10 s\"\n"
	stdout, stderr, err := conn.Run(ctx, []byte(script))
	conn.Close()
	state := strings.TrimSpace(string(stdout))
	if err != nil {
		why := remote.FirstLine(string(stderr))
		if why == "" {
			why = err.Error()
		}
		return unsure(fmt.Sprintf("cannot start a listener in %s's worker: %s", first.Name, why))
	}
	busy := strings.HasPrefix(state, "busy")
	if state != "listening" && !busy {
		return unsure(fmt.Sprintf("cannot listen on the endpoint in %s's worker: %s (torchrun needs python3 in %s)", first.Name, state, horovod.WorkerName))
	}

	out := make([]readiness.Result, len(inv.Hosts))
	driver.ForEach(len(inv.Hosts), o.Parallel, func(i int) {
		h := &inv.Hosts[i]
		own := horovod.WorkerAddress(inv, h).String()
		c, err := o.Dial(ctx, h)
		if err != nil {
			out[i] = readiness.Result{Target: target, Machine: h.Name, Check: CheckRendezvous, Subject: subject, Status: readiness.Unknown, Found: remote.DialError(err).Error()}
			return
		}
		defer c.Close()
		so, se, err := c.Run(ctx, []byte("docker exec "+horovod.WorkerName+" python3 -c "+remote.Quote(rendezvousConnect)+" "+
			rdzv.Addr().String()+" "+strconv.Itoa(int(rdzv.Port()))+" "+strconv.Itoa(peerConnectTimeout)+"\n"))
		if err != nil {
			why := remote.FirstLine(string(se))
			if why == "" {
				why = err.Error()
			}
			out[i] = readiness.Result{Target: target, Machine: h.Name, Check: CheckRendezvous, Subject: subject, Status: readiness.Unknown, Found: "cannot run the probe in " + horovod.WorkerName + ": " + why}
			return
		}
		got := strings.TrimSpace(string(so))
		fix := fmt.Sprintf("on %s: rdggen apply --target hosts (routes, firewall), then rdggen check --target hosts; a firewall in the VM must admit TCP port %d", first.Name, rdzv.Port())
		switch f := strings.Fields(got); {
		case strings.HasPrefix(got, "error"):
			out[i] = readiness.Result{Target: target, Machine: h.Name, Check: CheckRendezvous, Subject: subject, Status: readiness.Failed, Found: strings.TrimSpace(strings.TrimPrefix(got, "error")), Expected: "a TCP connection to torchrun's rendezvous store", Fix: fix}

		case busy:
			out[i] = readiness.Result{Target: target, Machine: h.Name, Check: CheckRendezvous, Subject: subject, Status: readiness.Passed, Found: "connected; the port is in use in " + first.Name + "'s worker (" + strings.TrimSpace(strings.TrimPrefix(state, "busy")) + ": a job's rendezvous store?)"}
		case len(f) != 2 || f[0] != token:
			out[i] = readiness.Result{Target: target, Machine: h.Name, Check: CheckRendezvous, Subject: subject, Status: readiness.Failed, Found: "an answer that is not rdggen's listener: " + got, Expected: "rdggen's listener in " + first.Name + "'s worker", Fix: "find what else answers on " + rdzv.String()}

		case f[1] != own:
			out[i] = readiness.Result{Target: target, Machine: h.Name, Check: CheckRendezvous, Subject: subject, Status: readiness.Failed, Found: "connected, but the listener saw " + f[1], Expected: own + " (this worker's own address)", Fix: "on " + h.Name + ": run /etc/rdggen/firewall.sh (or rdggen apply --target hosts)"}

		default:
			out[i] = readiness.Result{Target: target, Machine: h.Name, Check: CheckRendezvous, Subject: subject, Status: readiness.Passed, Found: "connected from " + own}
		}
	})
	// Stop the listener now (a torchrun job may follow) and remove its files.
	if c, err := o.Dial(ctx, first); err == nil {
		_, _, _ = c.Run(ctx, []byte("docker exec "+horovod.WorkerName+" sh -c "+remote.Quote("kill \"$(cat "+stateFile+".pid)\" 2>/dev/null; rm -f "+stateFile+" "+stateFile+".pid")+"\n"))
		c.Close()
	}
	return out
}
