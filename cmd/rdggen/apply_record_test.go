package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// recordRig is the reference cluster in vcsim, brought to health by apply
// with a record in XDG_CACHE_HOME=cache, and rdggen run in-process.
type recordRig struct {
	sim    *vcsimtest.Sim
	cache  string
	record string // the record file apply keeps
	file   string // the inventory
	env    map[string]string
}

func newRecordRig(t *testing.T) *recordRig {
	t.Helper()
	sim, err := vcsimtest.New(inventory.Reference(), vcsimtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	esxiModules = sim.Modules
	t.Cleanup(func() { esxiModules = nil })
	r := &recordRig{sim: sim, cache: t.TempDir(), file: filepath.Join(t.TempDir(), "cluster.yaml")}
	r.env = map[string]string{"GOVC_URL": sim.URL.String(), "GOVC_USERNAME": vcsimtest.Username, "GOVC_PASSWORD": vcsimtest.Password,
		"GOVC_TLS_CA_CERTS": sim.CAFile, "XDG_CACHE_HOME": r.cache}
	if err := os.WriteFile(r.file, inventory.ReferenceYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := sim.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.record = filepath.Join(esxiRecordDir(func(k string) string { return r.env[k] }), "esxi-"+c.Client.ServiceContent.About.InstanceUuid+".json")
	_ = c.Logout(context.Background())
	if r.record == "" {
		t.Fatal("no record file for the simulator")
	}
	return r
}

// apply runs `rdggen apply --target esxi --yes` and returns its exit
// status and output.
func (r *recordRig) apply() (int, string) {
	var out bytes.Buffer
	code := run(context.Background(), []string{"apply", "--target", "esxi", "--yes", "-f", r.file}, &out, &out, func(k string) string { return r.env[k] })
	return code, out.String()
}

// hideGPU removes vm's last GPU passthrough device as another vSphere
// client would (its change version moves on; the VM powered off first so
// that apply may add it back) and returns its new change version.
func (r *recordRig) hideGPU(t *testing.T, vm string) string {
	t.Helper()
	if r.sim.VM(vm).Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		if err := r.sim.PowerOff(context.Background(), vm); err != nil {
			t.Fatal(err)
		}
	}
	var removed bool
	r.sim.ReconfigVM(vm, func(v *simulator.VirtualMachine) {
		devs := v.Config.Hardware.Device
		for i := len(devs) - 1; i >= 0; i-- {
			if _, ok := devs[i].(*types.VirtualPCIPassthrough); ok {
				v.Config.Hardware.Device = append(devs[:i:i], devs[i+1:]...)
				removed = true
				return
			}
		}
	})
	if !removed {
		t.Fatalf("%s has no GPU to remove", vm)
	}
	return r.sim.VM(vm).Config.ChangeVersion
}

// forged is the record apply left with vm's change version set to cv: a
// record that says the VM was read whole at its new version.
func forged(t *testing.T, good []byte, vm, cv string) []byte {
	t.Helper()
	var rec esxiapply.Record
	if err := json.Unmarshal(good, &rec); err != nil {
		t.Fatal(err)
	}
	e, ok := rec.VMs[vm]
	if !ok {
		t.Fatalf("the record has no %s", vm)
	}
	e.ChangeVersion = cv
	rec.VMs[vm] = e
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A record that another user could have written is not believed: with the
// record's directory writable by others, with the record file owned by
// another user, or with a symbolic link at its path, a record carrying the
// new change version of a VM that lost its GPU would make apply say
// "nothing to do" while the VM lacks the GPU. apply says, in a note, that it
// does not use the record, reads every VM whole and adds the GPU back.
func TestApplyESXiRecordNotBelievedFromOthers(t *testing.T) {
	r := newRecordRig(t)
	for i := 0; i < 2; i++ { // the second apply records the VMs the first changed
		if code, out := r.apply(); code != exitOK {
			t.Fatalf("apply %d: exit %d\n%s", i+1, code, out)
		}
	}
	const vm = "clx-mld-42"
	const unread = "unchanged since the last apply read them"
	dir := filepath.Dir(r.record)
	cases := []struct {
		name  string
		plant func(t *testing.T, forged []byte)
		note  string
		undo  func()
	}{
		{"directory writable by others", func(t *testing.T, forged []byte) {
			if err := os.WriteFile(r.record, forged, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, dir + " is writable by its group or others (mode 0777): a record another user could write is not believed", func() {
			if err := os.Chmod(dir, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"symbolic link", func(t *testing.T, forged []byte) {
			elsewhere := filepath.Join(t.TempDir(), "record.json")
			if err := os.WriteFile(elsewhere, forged, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(r.record); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, r.record); err != nil {
				t.Fatal(err)
			}
		}, r.record + " is a symbolic link: a record another user could write is not believed", func() {}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name  string
			plant func(t *testing.T, forged []byte)
			note  string
			undo  func()
		}{"file of another user", func(t *testing.T, forged []byte) {
			if err := os.WriteFile(r.record, forged, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(r.record, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, r.record + " belongs to uid 65534, not to the user running rdggen (uid 0): a record another user could write is not believed", func() {}})
	} else if os.Getenv("CI") == "true" {
		t.Error("CI: the case of a record of another user needs root (chown)")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The record is good (the apply before the last one repaired a
			// VM; the last one recorded it): a no-op reads no VM whole.
			good, err := os.ReadFile(r.record)
			if err != nil {
				t.Fatal(err)
			}
			if code, out := r.apply(); code != exitOK || !strings.Contains(out, "8 VM(s) "+unread) || !strings.Contains(out, "esxi: nothing to do") {
				t.Fatalf("no-op with the good record: exit %d\n%s", code, out)
			}
			tc.plant(t, forged(t, good, vm, r.hideGPU(t, vm)))
			code, out := r.apply()
			tc.undo()
			if code != exitOK || strings.Contains(out, "esxi: nothing to do") || strings.Contains(out, unread) ||
				!strings.Contains(out, "esxi: note: the record of the last apply cannot be used ("+tc.note+"): every VM is read whole\n") ||
				!strings.Contains(out, "vm "+vm+" (") || !strings.Contains(out, "  add GPU gpus[") || !strings.Contains(out, "esxi: 1 VM(s) and 0 host(s) changed") {
				t.Fatalf("apply with the planted record: exit %d\n%s", code, out)
			}
			// The record is a regular file of the user's (a link or
			// another user's file was replaced by that apply's record;
			// the open directory was not written, see below); the next
			// apply reads the repaired VM whole and records it.
			if fi, err := os.Lstat(r.record); err != nil || !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
				t.Fatalf("the record was not replaced: %v, %v", fi, err)
			}
			if code, out := r.apply(); code != exitOK || !strings.Contains(out, "7 VM(s) "+unread) {
				t.Fatalf("apply after the repair: exit %d\n%s", code, out)
			}
		})
	}
	// A record apply cannot use is also not written into a directory
	// others can write: the note says so.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if err := os.Remove(r.record); err != nil {
		t.Fatal(err)
	}
	code, out := r.apply()
	if code != exitOK || !strings.Contains(out, "esxi: note: the record of this apply was not saved ("+dir+" is writable by its group or others (mode 0777): a record another user could write is not believed): the next apply reads every VM whole\n") {
		t.Errorf("apply into an open directory: exit %d\n%s", code, out)
	}
	if _, err := os.Lstat(r.record); !os.IsNotExist(err) {
		t.Errorf("a record was written into %s: %v", dir, err)
	}
}

// A named pipe at the record's path (nobody writes it) does not hold
// apply: it is refused at once, said in a note, and every VM is read
// whole; the record of this apply replaces the pipe. Bounded: a hang fails
// the test after 2 minutes (and the pipe is then opened for writing, which
// releases the apply).
func TestApplyESXiRecordFIFO(t *testing.T) {
	r := newRecordRig(t)
	if err := os.MkdirAll(filepath.Dir(r.record), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(r.record, 0o600); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	go func() {
		code, out := r.apply()
		done <- result{code, out}
	}()
	select {
	case res := <-done:
		if res.code != exitOK || !strings.Contains(res.out, "esxi: note: the record of the last apply cannot be used ("+r.record+" is not a regular file (a named pipe)): every VM is read whole\n") {
			t.Fatalf("apply with a FIFO as its record: exit %d\n%s", res.code, res.out)
		}
	case <-time.After(2 * time.Minute):
		if f, err := os.OpenFile(r.record, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("apply hangs on a FIFO at its record's path")
	}
	if fi, err := os.Lstat(r.record); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the record was not written in place of the FIFO: %v, %v", fi, err)
	}
}
