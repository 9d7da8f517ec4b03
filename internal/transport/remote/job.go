package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"time"

	"github.com/rdggen/rdggen/pkg/quote"
)

// ExitNotRunning is the exit status of a ContainerJob whose container is
// not running (the message on stderr names the fix).
const ExitNotRunning = 125

// AsRoot runs a shell command line as root: directly when the login user
// is root or may use Docker, through `sudo -n` (never prompting) otherwise.
func AsRoot(cmdline string) string {
	return `if [ "$(id -u)" = 0 ] || docker info >/dev/null 2>&1; then sh -c ` + Quote(cmdline) +
		`; else sudo -n sh -c ` + Quote(cmdline) + `; fi`
}

// ContainerJob is a command run in a running container of a VM over SSH
// (`docker exec`), which can be stopped from another session: the process
// writes its ID to a file in the container before it execs the command,
// and Signal sends a signal to that ID. `rdggen run` starts the job's
// launcher this way, `rdggen bench` its benchmarks.
type ContainerJob struct {
	// Conn is the connection to the VM; Host names it in messages.
	Conn *SSHConn
	Host string
	// Container is the container's name (horovod.WorkerName).
	Container string
	// Env are NAME=VALUE pairs given to docker exec -e.
	Env []string
	// Argv is the command in the container.
	Argv []string
	// Grace is how long the job gets after SIGINT before SIGKILL (0: 10 s).
	Grace time.Duration
	// Group runs Argv as the leader of a process group of its own
	// (setsid(1) -w, util-linux, in the container), and Signal signals the
	// whole group: a launcher that starts processes of its own (torchrun)
	// then leaves none behind when it is killed.
	Group bool
	// Stop is the signal that asks the job to stop when ctx ends ("TERM";
	// "" is "INT", as Ctrl-C on a terminal). SIGKILL follows after Grace.
	Stop string

	pidFile string
}

// Command is the shell command line the job's session runs (as root): it
// fails with ExitNotRunning when the container is not running, else
// records the process ID and runs Argv.
func (j *ContainerJob) Command() string {
	if j.pidFile == "" {
		var nonce [6]byte
		_, _ = rand.Read(nonce[:])
		j.pidFile = "/tmp/rdggen-job." + hex.EncodeToString(nonce[:]) + ".pid"
	}
	exec := []string{"docker", "exec"}
	for _, e := range j.Env {
		exec = append(exec, "-e", e)
	}
	exec = append(exec, j.Container)
	if j.Group {
		exec = append(exec, "setsid", "-w")
	}
	exec = append(exec, "sh", "-c", `echo $$ >`+j.pidFile+` && exec "$@"`, "rdggen-job")
	exec = append(exec, j.Argv...)
	return AsRoot(`docker inspect --type container -f '{{.State.Running}}' ` + Quote(j.Container) + ` 2>/dev/null | grep -qx true || ` +
		`{ echo "rdggen: ` + j.Container + ` is not running on ` + j.Host + `: run 'rdggen apply --target workers' first" >&2; exit 125; }; ` +
		`exec ` + quote.ShJoin(exec))
}

// Run runs the job, streaming its output to stdout and stderr, and returns
// its exit status. When ctx ends first, interrupted (if not nil) hears it,
// the job gets SIGINT (or Stop), SIGKILL after Grace, and the connection is closed 5 s
// after that; Run then returns the status the job ended with.
func (j *ContainerJob) Run(ctx context.Context, stdout, stderr io.Writer, interrupted func(sig string)) (int, error) {
	cmd := j.Command()
	grace := j.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		if interrupted != nil {
			interrupted(j.stopSignal())
		}
		j.Signal(j.stopSignal())
		select {
		case <-done:
		case <-time.After(grace):
			if interrupted != nil {
				interrupted("KILL")
			}
			j.Signal("KILL")
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				j.Conn.Close()
			}
		}
	}()
	status, err := j.Conn.Exec(context.Background(), cmd, nil, stdout, stderr)
	close(done)
	<-stopped
	return status, err
}

func (j *ContainerJob) stopSignal() string {
	if j.Stop == "" {
		return "INT"
	}
	return j.Stop
}

// Signal sends sig ("INT", "KILL") to the job in the container (to its
// process group with Group), from a session of its own (bounded to 10 s).
func (j *ContainerJob) Signal(sig string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	target := `"$(cat ` + j.pidFile + `)"`
	if j.Group {
		target = `-"$(cat ` + j.pidFile + `)"`
	}
	cmd := AsRoot(`docker exec ` + Quote(j.Container) + ` sh -c ` + Quote(`kill -`+sig+` `+target+` 2>/dev/null`))
	_, _ = j.Conn.Exec(ctx, cmd, nil, io.Discard, io.Discard)
}
