package netnstest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/testing/exefile"
)

// The hosts' runtime (runc-memlock) edits the spec that containerd's shim
// hands to `runc create --bundle`: a container whose root filesystem has
// HostMountsFile gets the listed host paths bound read-only ahead of
// Docker's mounts; one without it keeps its mounts; a bad or missing path
// stops the container before runc runs. runc itself is a stand-in here
// that records its arguments: what matters is the spec it would be given
// (TestTorchrunDDP in cmd/rdggen runs the real one under dockerd).
func TestRuntimeHostMounts(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	c := &Cluster{Dir: t.TempDir(), t: t}
	bin := c.dockerBin()
	fake := t.TempDir()
	if err := exefile.Write(filepath.Join(fake, "runc"), []byte("#!/bin/sh\necho \"$@\" >\"$RUNC_ARGS\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The shape of dockerd 20.10's spec: compact JSON, the root an absolute
	// path (the overlay's merged directory) or, for other shims, relative
	// to the bundle.
	const spec = `{"ociVersion":"1.0.2-dev","process":{"args":["sh"],"rlimits":[{"type":"RLIMIT_NOFILE","hard":1048576,"soft":1048576}]},"root":{"path":"ROOT"},"hostname":"w","mounts":[{"destination":"/proc","type":"proc","source":"proc","options":["nosuid","noexec","nodev"]}],"linux":{}}`
	hostDir := t.TempDir() // a host directory to bind
	type mount struct {
		Destination, Type, Source string
		Options                   []string
	}
	proc := mount{"/proc", "proc", "proc", []string{"nosuid", "noexec", "nodev"}}
	bind := func(p string) mount { return mount{p, "bind", p, []string{"rbind", "ro"}} }
	for _, tc := range []struct {
		name     string
		relative bool
		list     *string // HostMountsFile's content; nil: no such file
		want     []mount // the spec's mounts after the runtime
		err      string  // the runtime's message when it refuses
	}{
		{name: "no file", want: []mount{proc}},
		{name: "two paths", list: ptr(hostDir + "\n/etc\n"), want: []mount{bind(hostDir), bind("/etc"), proc}},
		{name: "relative root", relative: true, list: ptr("/etc\n"), want: []mount{bind("/etc"), proc}},
		{name: "bad path", list: ptr("/etc\n/usr/lib with space\n"), err: "bad path /usr/lib with space"},
		{name: "not absolute", list: ptr("usr/lib\n"), err: "bad path usr/lib"},
		{name: "dot-dot", list: ptr("/usr/../etc\n"), err: "bad path /usr/../etc"},
		{name: "missing", list: ptr(hostDir + "/none\n"), err: "no " + hostDir + "/none on this machine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundle := t.TempDir()
			root := filepath.Join(t.TempDir(), "merged")
			rootRef := root
			if tc.relative {
				root, rootRef = filepath.Join(bundle, "rootfs"), "rootfs"
			}
			if err := os.MkdirAll(filepath.Join(root, filepath.Dir(HostMountsFile)), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.list != nil {
				if err := os.WriteFile(filepath.Join(root, HostMountsFile), []byte(*tc.list), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := filepath.Join(bundle, "config.json")
			if err := os.WriteFile(cfg, []byte(strings.Replace(spec, "ROOT", rootRef, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			args := filepath.Join(t.TempDir(), "args")
			cmd := exec.Command("sh", filepath.Join(bin, "runc-memlock"), "--root", "/run/x", "create", "--bundle", bundle, "--pid-file", "p", "id1")
			cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "RUNC_ARGS="+args)
			out, err := cmd.CombinedOutput()
			ran, _ := os.ReadFile(args)
			if tc.err != "" {
				if err == nil || !strings.Contains(string(out), "netnstest runc: "+filepath.Join(root, HostMountsFile)+": "+tc.err) || len(ran) != 0 {
					t.Fatalf("runtime: %v, runc ran: %q, output %q; want a refusal with %q", err, ran, out, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("runtime: %v\n%s", err, out)
			}
			if want := "--root /run/x create --bundle " + bundle + " --pid-file p id1\n"; string(ran) != want {
				t.Errorf("runc got %q, want %q", ran, want)
			}
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Mounts []mount }
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("the edited spec is no JSON: %v\n%s", err, b)
			}
			if diff := cmp.Diff(tc.want, got.Mounts); diff != "" {
				t.Errorf("mounts (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr(s string) *string { return &s }
