package esxiapply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/atomicfile"
	"github.com/rdggen/rdggen/internal/ownfs"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// Record is what one apply leaves for the next about the VMs it read whole
// and found matching the inventory, so that the next apply can skip their
// device lists (about 10 KB of XML per VM, most of a no-op's bytes and CPU).
//
// The proof that a VM is unchanged is its config.changeVersion: vSphere
// changes it on every change of the VM's configuration, whoever makes it
// (vSphere API reference, VirtualMachineConfigInfo.changeVersion: "Each
// change to the configuration will update this value"). A VM is skipped only
// when all of these hold: the record is of the same vCenter (InstanceUuid);
// the VM has the recorded managed object id and, read in the first
// retrieve, the recorded non-empty changeVersion; the digest of what the
// inventory wants of it and of the facts of its ESXi host the plan uses
// (vmDigest) is the recorded one; its host is found and has no NIC problem.
// Anything else, a missing or damaged record included, reads the VM whole.
//
// An entry is written only for a VM read whole whose changeVersion was the
// same in both reads of this apply (first retrieve and device list), and
// whose plan had nothing to change, wait for or fail: rdggen records only
// what it saw. A VM this apply reconfigured gets no entry, so the next apply
// reads it whole once more (and records it then).
//
// The record is kept outside the VMs, in a file of the machine running
// rdggen (pkg/apply ESXiOptions.Record): a marker in a VM's ExtraConfig
// could not hold the changeVersion its own write produces, since that write
// is itself a reconfiguration. Losing or damaging the file costs one full
// read, never a skipped change.
type Record struct {
	// Schema is RecordSchema; a record of another schema is ignored.
	Schema string `json:"schema"`
	// VCenter is the InstanceUuid of the vCenter the record is of.
	VCenter string `json:"vcenter"`
	// VMs by VM name.
	VMs map[string]VMRecord `json:"vms"`
	// Hosts by ESXi host name: hints, not proofs (see HostRecord).
	Hosts map[string]HostRecord `json:"hosts,omitempty"`
}

// HostRecord is what the last apply saw of an ESXi host that lets the next
// read less of it. It proves nothing: whatever it names is read again and
// checked; a wrong hint costs one more retrieve, never a skipped change.
type HostRecord struct {
	// Ref is the host's managed object id, e.g. "host-21".
	Ref string `json:"ref"`
	// VSwitch is the key (HostVirtualSwitch.key) of the standard vSwitch
	// that carried the host's PF. The next apply reads only the vSwitches
	// of such keys (config.network.vswitch["KEY"]) instead of every
	// vSwitch, and reads the whole list of a host where none of them
	// carries the PF any more (completeVSwitches).
	VSwitch string `json:"vswitch,omitempty"`
	// RailVSwitches are, for a host whose VMs have several rails, the keys
	// of the other vSwitches that carried the other rails' PFs, read the
	// same way (completeVSwitches reads the whole list when one PF is not
	// carried by the vSwitches read).
	RailVSwitches []string `json:"railVSwitches,omitempty"`
}

// RecordSchema names the record's format and the plan rules its digests
// stand for; it changes whenever planVM compares something new, so that a
// record written by an older rdggen is read whole once.
const RecordSchema = "rdggen.vsphere-record/1"

// VMRecord is one VM as the last apply saw it.
type VMRecord struct {
	// Ref is the VM's managed object id, e.g. "vm-42".
	Ref string `json:"ref"`
	// ChangeVersion is the VM's config.changeVersion when it was read whole.
	ChangeVersion string `json:"changeVersion"`
	// Digest is vmDigest then: hex SHA-256.
	Digest string `json:"digest"`
	// GPUs are the PCI addresses of the VM's GPUs, in inventory order, as
	// the plan resolved them (the host plan needs them: passthrough, and
	// which devices are taken).
	GPUs []string `json:"gpus,omitempty"`
	// HW is the VM's hardware version (config.version, e.g. "vmx-19"):
	// the passthrough limit is checked again against its host's ESXi
	// version (limits.go).
	HW string `json:"hw"`
}

// vmDigest is the hex SHA-256 of everything the plan of h's VM compares
// besides the VM's own configuration: what the inventory (through pkg/vmx)
// wants of it, and the facts of its ESXi host the plan resolves from the
// first retrieve (the host's object, the PF's PCI address, the port
// group's object and key). "" when the host or the port group is not found
// (such a VM is never skipped).
func vmDigest(st *state, hp *hostPlan, h *inventory.Host) string {
	if hp == nil || hp.host == nil || hp.err != nil || hp.blocked != nil {
		return ""
	}
	a := vmx.SRIOVAdapter(h)
	net, ok := st.hostNetwork(hp.host, a.PortGroup)
	if !ok {
		return ""
	}
	// The lines are the ones fmt.Fprintf wrote ("%q" is strconv.Quote,
	// "%+v" of the GPU and the adapter is formatted once per value: a
	// digest of every VM is most of the record's CPU); a test checks them.
	d := sha256.New()
	var b []byte
	line := func(parts ...string) {
		b = b[:0]
		for _, p := range parts {
			b = append(b, p...)
		}
		b = append(b, '\n')
		d.Write(b)
	}
	line(RecordSchema)
	line("vm ", strconv.Quote(h.VM), " esxi ", strconv.Quote(h.ESXi), " host ", hp.host.Self.Value)
	line("firmware ", strconv.Quote(vmx.Firmware), " reserve-all-memory ", strconv.FormatBool(vmx.ReserveAllMemory))
	for _, o := range vmx.ExtraConfig(h) {
		line("extra ", strconv.Quote(o.Key), " = ", strconv.Quote(o.Value))
	}
	for _, g := range h.GPUs {
		line("gpu ", plusV(g)) // the model decides its device ids (pkg/vmx); RecordSchema their rules
	}
	line("adapter ", plusV(a), " pf ", strconv.Quote(hp.pfID))
	if h.MultiRail() {
		// Each rail's VF and the PF it comes from (its GPUs' rails are in
		// the gpu lines): a record of an rdggen that attached rail 0's VF
		// alone proves no VM of several rails.
		for _, r := range h.Rails[1:] {
			id := ""
			if pf := hp.pf(r.PF); pf != nil {
				id = pf.id
			}
			line("rail ", strconv.Itoa(r.Index), " pf ", strconv.Quote(r.PF), " ", strconv.Quote(id))
		}
	}
	line("network ", net.ref.Value, " key ", strconv.Quote(net.key), " name ", strconv.Quote(net.name))
	line("template ", strconv.FormatBool(h.Template != nil))
	return hexSum(d)
}

// plusV is fmt's %+v of v (a GPU or an adapter: comparable values),
// formatted once per value (up to maxPlusV values are kept).
func plusV(v any) string {
	if s, ok := plusVs.Load(v); ok {
		return s.(string)
	}
	s := fmt.Sprintf("%+v", v)
	if plusVCount.Load() < maxPlusV {
		if _, loaded := plusVs.LoadOrStore(v, s); !loaded {
			plusVCount.Add(1)
		}
	}
	return s
}

const maxPlusV = 4096

var (
	plusVs     sync.Map
	plusVCount atomic.Int32
)

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// proveUnchanged returns the VMs of inv that the record proves unchanged
// (see Record), by managed object: read from the first retrieve only.
func proveUnchanged(c vcenterID, inv *inventory.Inventory, st *state, rec *Record) map[types.ManagedObjectReference]*VMRecord {
	out := map[types.ManagedObjectReference]*VMRecord{}
	if rec == nil || rec.Schema != RecordSchema || rec.VCenter == "" || rec.VCenter != string(c) {
		return out
	}
	hosts := map[string]*hostPlan{}
	for _, name := range inv.ESXiHosts() {
		hosts[name] = planHost(inv, st, name) // pure: the first retrieve's host facts
	}
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		r, ok := rec.VMs[h.VM]
		vms := st.vms[h.VM]
		if !ok || len(vms) != 1 || len(r.GPUs) != len(h.GPUs) {
			continue
		}
		vm := vms[0]
		hp := hosts[h.ESXi]
		if vm.Config == nil || vm.Config.ChangeVersion == "" || vm.Self.Value != r.Ref || vm.Config.ChangeVersion != r.ChangeVersion ||
			hp == nil || hp.host == nil || vm.Runtime.Host == nil || *vm.Runtime.Host != hp.host.Self {
			continue
		}
		if dg := vmDigest(st, hp, h); dg == "" || dg != r.Digest {
			continue
		}
		out[vm.Self] = &r
	}
	return out
}

// vswitchHints lists, sorted and once each, the vSwitch keys the record
// holds for the ESXi hosts of inv; nil (read every vSwitch) when the record
// is missing, of another schema or vCenter, or names no key for one of
// them (so that a host the record does not know costs no extra retrieve).
func vswitchHints(c vcenterID, inv *inventory.Inventory, rec *Record) []string {
	if rec == nil || rec.Schema != RecordSchema || rec.VCenter == "" || rec.VCenter != string(c) {
		return nil
	}
	var keys []string
	for _, name := range inv.ESXiHosts() {
		r, ok := rec.Hosts[name]
		if !ok || r.VSwitch == "" {
			return nil
		}
		keys = append(keys, r.VSwitch)
		keys = append(keys, r.RailVSwitches...)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// vcenterID is a vCenter's InstanceUuid.
type vcenterID string

// newRecord is the record this apply leaves: an entry for every inventory
// VM that was proven unchanged (its old entry) or read whole with one
// changeVersion and planned with nothing to do (see Record), and the old
// entries of VMs not in inv, as they were.
func newRecord(c vcenterID, inv *inventory.Inventory, st *state, hosts []*hostPlan, old *Record) *Record {
	rec := &Record{Schema: RecordSchema, VCenter: string(c), VMs: map[string]VMRecord{}, Hosts: map[string]HostRecord{}}
	if old != nil && old.Schema == RecordSchema && old.VCenter == string(c) {
		mine := map[string]bool{}
		for i := range inv.Hosts {
			mine[inv.Hosts[i].VM] = true
		}
		for name, r := range old.VMs {
			if !mine[name] {
				rec.VMs[name] = r
			}
		}
		for name, r := range old.Hosts {
			if !slices.Contains(inv.ESXiHosts(), name) {
				rec.Hosts[name] = r
			}
		}
	}
	if c == "" {
		return rec
	}
	for _, hp := range hosts {
		if hp.host != nil && hp.vswitchKey != "" {
			hr := HostRecord{Ref: hp.host.Self.Value, VSwitch: hp.vswitchKey}
			for _, pf := range hp.pfs[1:] {
				if k := pf.vswitchKey; k != "" && k != hp.vswitchKey && !slices.Contains(hr.RailVSwitches, k) {
					hr.RailVSwitches = append(hr.RailVSwitches, k)
				}
			}
			rec.Hosts[hp.name] = hr
		}
	}
	for _, hp := range hosts {
		for _, vp := range hp.vms {
			if vp.err != nil || vp.vm == nil || vp.vm.Config == nil || vp.anyChange() || vp.clone != nil ||
				len(vp.waiting) > 0 || vp.blockedBy || slices.Contains(vp.gpus, "") {
				continue
			}
			if vp.proven != nil {
				rec.VMs[vp.inv.VM] = *vp.proven
				continue
			}
			cv := vp.vm.Config.ChangeVersion
			dg := vmDigest(st, hp, vp.inv)
			if !vp.planned || cv == "" || dg == "" || firstBootDue(vp.vm) {
				continue
			}
			rec.VMs[vp.inv.VM] = VMRecord{Ref: vp.vm.Self.Value, ChangeVersion: cv, Digest: dg, GPUs: slices.Clone(vp.gpus), HW: vp.vm.Config.Version}
		}
	}
	return rec
}

// vcenterOf is the InstanceUuid of the client's vCenter ("" when it says
// none: then nothing is recorded).
func vcenterOf(about types.AboutInfo) vcenterID { return vcenterID(about.InstanceUuid) }

// passthroughOf lists the PCI addresses of the GPUs passed through to vm:
// its device list, or, for a VM proven unchanged (device list not read),
// its record's.
func (s *state) passthroughOf(vm *mo.VirtualMachine) []string {
	if r := s.proven[vm.Self]; r != nil {
		return r.GPUs
	}
	return vmPassthroughIDs(vm)
}

// firstBootDue reports whether vm's FirstBootKey says its first boot is
// pending or under way (clone.go): such a VM is not recorded, so that the
// first boot is planned from a whole read.
func firstBootDue(vm *mo.VirtualMachine) bool {
	for _, ov := range vm.Config.ExtraConfig {
		if o := ov.GetOptionValue(); o.Key == FirstBootKey {
			v := fmt.Sprint(o.Value)
			return v == FirstBootPending || v == FirstBootBooting
		}
	}
	return false
}

// maxRecord bounds the record file LoadRecord reads: 64 MiB, far above
// the about 300 bytes a VM's entry takes (a record of 4,096 VMs is about
// 1.2 MB).
const maxRecord = 64 << 20

// LoadRecord reads a record written by Save. A file that does not exist is
// no record (nil, nil); one that cannot be read or decoded, or is of
// another schema, is an error (the caller then reads every VM whole).
//
// A record decides which VMs apply does not read, so it is believed only
// when no one but the user running rdggen could have written it (the rule
// of internal/ownfs, as for the switch backups' directory): its directory
// must be the user's own and writable by no one else, with no directory
// above it of another user or writable by others without the sticky bit
// (who could swap it), and the file a
// regular file of the user's own, writable by no one else, not a symbolic
// link. Anything else is refused with an error saying which rule failed:
// another user able to write the record could hide a VM's change (a record
// with the VM's new change version makes apply skip it). The file is opened
// without blocking (a named pipe at its path is refused, not waited on).
func LoadRecord(path string) (*Record, error) {
	if err := checkRecordDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := ownfs.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, refused(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecord {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, maxRecord>>20)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != RecordSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, RecordSchema)
	}
	return &r, nil
}

// checkRecordDir refuses the record's directory dir when another user
// could have written into it (ownfs.CheckDir) or could move it away and
// put their own in its place (ownfs.CheckAncestors: a directory above it
// of another user, or writable by others without the sticky bit). A
// missing dir is fine.
func checkRecordDir(dir string) error {
	if err := ownfs.CheckAncestors(dir); err != nil {
		return refused(err)
	}
	if err := ownfs.CheckDir(dir); err != nil {
		return refused(err)
	}
	return nil
}

// refused adds to an ownfs refusal of the record why it matters.
func refused(err error) error {
	var e *ownfs.Error
	if errors.As(err, &e) && (e.Problem == ownfs.NotOwner || e.Problem == ownfs.Writable || e.Problem == ownfs.Symlink ||
		e.Problem == ownfs.AncestorOwner || e.Problem == ownfs.AncestorWritable) {
		return fmt.Errorf("%w: a record another user could write is not believed", err)
	}
	return err
}

// Save writes the record to path as JSON (mode 0600, its directory made
// 0700 if missing), through a temporary file renamed over it
// (atomicfile.Replace): a reader sees
// the old record or the new, never half of one, and whatever was at path (a
// symbolic link included) is replaced, never written through. An existing
// directory LoadRecord would refuse is refused here too (not written into).
func (r *Record) Save(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := checkRecordDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := ownfs.CheckDir(dir); err != nil { // made meanwhile by another
		return refused(err)
	}
	return atomicfile.Replace(path, append(b, '\n'), 0o600)
}
