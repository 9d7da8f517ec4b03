// Command replay stands in for perftest's ib_write_bw, nccl-tests'
// all_reduce_perf and python running tf_cnn_benchmarks (the Horovod
// benchmark) in the namespace tests' worker image, where no RDMA
// device or GPU exists: it behaves as the real programs do towards their
// caller (the server listens on its port and waits for its client, the
// client connects to it and fails when it cannot, only MPI rank 0 of
// all_reduce_perf prints the table) and prints a real recorded output,
// from a public report, in place of a measurement. Which program it is
// comes from its name (argv[0]).
//
// Recorded outputs are in /usr/share/rdgtest (each with a .source file
// naming where it was published): ib_write_bw prints perftest.txt with the
// "Device" and "GID index" its command line gives, as perftest does;
// all_reduce_perf prints nccl.txt; python with a tf_cnn_benchmarks.py
// argument prints, in every rank as the real one does, tfcnn-N.txt for a job
// of N ranks (OMPI_COMM_WORLD_SIZE), else tfcnn.txt. Every run appends what it was asked to
// /tmp/rdgtest-replay.log. When /tmp/rdgtest-hang exists, a client and
// all_reduce_perf wait 10 minutes first (for interrupt tests).
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

const dir = "/usr/share/rdgtest"

func main() {
	logRun()
	switch filepath.Base(os.Args[0]) {
	case "ib_write_bw":
		os.Exit(perftest(os.Args[1:]))
	case "all_reduce_perf":
		os.Exit(ncclTests())
	case "python":
		os.Exit(tfCNN(os.Args[1:]))
	}
	fmt.Fprintf(os.Stderr, "replay: unknown program %s\n", os.Args[0])
	os.Exit(2)
}

func logRun() {
	f, err := os.OpenFile("/tmp/rdgtest-replay.log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s rank=%s\n", filepath.Base(os.Args[0]), strings.Join(os.Args[1:], " "), os.Getenv("OMPI_COMM_WORLD_RANK"))
}

func hang() {
	if _, err := os.Stat("/tmp/rdgtest-hang"); err == nil {
		time.Sleep(10 * time.Minute)
	}
}

// perftest: "-d DEV -x IDX -p PORT … [server]", the flags rdggen passes.
func perftest(args []string) int {
	dev, gid, port, server := "mlx5_0", "0", "18515", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-d" || a == "-x" || a == "-p" || a == "-D" || a == "-i" || a == "-s") && i+1 < len(args):
			switch a {
			case "-d":
				dev = args[i+1]
			case "-x":
				gid = args[i+1]
			case "-p":
				port = args[i+1]
			}
			i++
		case strings.HasPrefix(a, "-"):
		default:
			server = a
		}
	}
	if server == "" {
		// perftest's server banner (perftest_parameters.c), then it waits.
		fmt.Println("\n************************************\n* Waiting for client to connect... *\n************************************")
		l, err := net.Listen("tcp", ":"+port)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Couldn't listen to port %s\n", port)
			return 1
		}
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		_, _ = bufio.NewReader(c).ReadString('\n')
		c.Close()
		return 0
	}
	hang()
	c, err := net.DialTimeout("tcp", net.JoinHostPort(server, port), 5*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Couldn't connect to %s:%s\n", server, port)
		return 1
	}
	fmt.Fprintln(c, "done")
	c.Close()
	out, err := os.ReadFile(filepath.Join(dir, "perftest.txt"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := regexp.MustCompile(`(GID index\s*:\s*)\d+`).ReplaceAllString(string(out), "${1}"+gid)
	s = regexp.MustCompile(`(Device\s*:\s*)\S+`).ReplaceAllString(s, "${1}"+dev)
	fmt.Print(s)
	return 0
}

func ncclTests() int {
	hang()
	if r := os.Getenv("OMPI_COMM_WORLD_RANK"); r != "" && r != "0" {
		return 0
	}
	out, err := os.ReadFile(filepath.Join(dir, "nccl.txt"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Stdout.Write(out)
	return 0
}

// tfCNN prints the recorded tf_cnn_benchmarks output for the job's size.
func tfCNN(args []string) int {
	if len(args) == 0 || !strings.HasSuffix(args[0], "tf_cnn_benchmarks.py") {
		fmt.Fprintf(os.Stderr, "replay: python stands in for tf_cnn_benchmarks.py only, not %q\n", args)
		return 2
	}
	hang()
	for _, name := range []string{"tfcnn-" + os.Getenv("OMPI_COMM_WORLD_SIZE") + ".txt", "tfcnn.txt"} {
		if out, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			os.Stdout.Write(out)
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "python: can't open file '%s': [Errno 2] No such file or directory\n", args[0])
	return 2
}
