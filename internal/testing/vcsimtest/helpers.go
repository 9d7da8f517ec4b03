package vcsimtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// Counter counts SOAP calls by method name on the client side; wrap the
// client's transport with it (vcenter.Connect's wrap argument).
type Counter struct {
	mu      sync.Mutex
	n       map[string]int
	watch   []string
	matched map[string]int
	bytes   int64 // response bytes read
	// keep: a copy of each response body is kept in bodies, whole, once
	// read to its end or closed (KeepBodies).
	keep   bool
	bodies [][]byte
}

// KeepBodies makes the counter keep a copy of every response body read
// from now on (until Reset), for PropertyBytes.
func (c *Counter) KeepBodies() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep = true
}

// PropertyBytes sums, per object type and property path ("VirtualMachine
// config.changeVersion"), the bytes of the propSet elements of the
// responses kept since KeepBodies, the rest under "(other)": where a
// retrieve's bytes go.
func (c *Counter) PropertyBytes() map[string]int {
	c.mu.Lock()
	bodies := slices.Clone(c.bodies)
	c.mu.Unlock()
	out := map[string]int{}
	for _, b := range bodies {
		propertyBytes(b, out)
	}
	return out
}

// propertyBytes adds the bytes of one response to out (PropertyBytes).
func propertyBytes(b []byte, out map[string]int) {
	typ := ""
	total := len(b)
	for len(b) > 0 {
		i := bytes.Index(b, []byte("<propSet>"))
		o := bytes.Index(b, []byte("<obj type=\""))
		if o >= 0 && (i < 0 || o < i) {
			b = b[o+len("<obj type=\""):]
			if q := bytes.IndexByte(b, '"'); q >= 0 {
				typ = string(b[:q])
			}
			continue
		}
		if i < 0 {
			break
		}
		b = b[i:]
		end := bytes.Index(b, []byte("</propSet>"))
		if end < 0 {
			break
		}
		el := b[:end+len("</propSet>")]
		name := "?"
		if n := bytes.Index(el, []byte("<name>")); n >= 0 {
			if m := bytes.Index(el[n:], []byte("</name>")); m >= 0 {
				name = string(el[n+len("<name>") : n+m])
			}
		}
		if k := strings.IndexByte(name, '['); k >= 0 {
			name = name[:k] + "[…]"
		}
		out[typ+" "+name] += len(el)
		total -= len(el)
		b = b[len(el):]
	}
	out["(other)"] += total
}

// NewCounter returns a zeroed counter.
func NewCounter() *Counter { return &Counter{n: map[string]int{}, matched: map[string]int{}} }

// Watch makes the counter also count the requests whose body contains s
// (Matched), e.g. a property path.
func (c *Counter) Watch(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watch = append(c.watch, s)
}

// Matched returns the requests since the last Reset whose body contained s
// (registered with Watch).
func (c *Counter) Matched(s string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.matched[s]
}

var reMethod = regexp.MustCompile(`<(?:[A-Za-z0-9_]+:)?Body[^>]*>\s*<(?:[A-Za-z0-9_]+:)?([A-Za-z0-9_]+)`)

// Wrap returns rt counting every SOAP request it carries.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Body != nil && req.Method == http.MethodPost {
			b, err := io.ReadAll(req.Body)
			_ = req.Body.Close()
			if err != nil {
				return nil, err
			}
			req.Body = io.NopCloser(bytes.NewReader(b))
			name := "?"
			if m := reMethod.FindSubmatch(b); m != nil {
				name = string(m[1])
			}
			c.mu.Lock()
			c.n[name]++
			for _, w := range c.watch {
				if bytes.Contains(b, []byte(w)) {
					c.matched[w]++
				}
			}
			c.mu.Unlock()
		}
		res, err := rt.RoundTrip(req)
		if err == nil && res.Body != nil {
			cb := &countingBody{ReadCloser: res.Body, c: c}
			c.mu.Lock()
			if c.keep {
				cb.keep = &bytes.Buffer{}
			}
			c.mu.Unlock()
			res.Body = cb
		}
		return res, err
	})
}

// countingBody adds what is read from a response to its Counter's bytes.
type countingBody struct {
	io.ReadCloser
	c    *Counter
	keep *bytes.Buffer // the copy of the body, when the counter keeps them
	once sync.Once
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.mu.Lock()
	b.c.bytes += int64(n)
	b.c.mu.Unlock()
	if b.keep != nil {
		b.keep.Write(p[:n])
		if err != nil {
			b.done()
		}
	}
	return n, err
}

func (b *countingBody) Close() error {
	if b.keep != nil {
		b.done()
	}
	return b.ReadCloser.Close()
}

// done hands the kept copy of the body to the counter, once.
func (b *countingBody) done() {
	b.once.Do(func() {
		b.c.mu.Lock()
		b.c.bodies = append(b.c.bodies, b.keep.Bytes())
		b.c.mu.Unlock()
	})
}

// Bytes returns the response bytes (SOAP XML, after any transport
// decompression) read since the last Reset.
func (c *Counter) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Count returns the calls of one method.
func (c *Counter) Count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

// Total returns all calls.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := 0
	for _, v := range c.n {
		t += v
	}
	return t
}

// Reset zeroes the counts.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = map[string]int{}
	c.matched = map[string]int{}
	c.bytes = 0
	c.bodies = nil
	c.keep = false
}

// String lists the counts, "Method=n …", sorted by method.
func (c *Counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.n))
	for k := range c.n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, c.n[k])
	}
	return strings.TrimSpace(b.String())
}

// VM returns the simulator's VM object by name, nil if none.
func (s *Sim) VM(name string) *simulator.VirtualMachine {
	for _, e := range s.Model.Map().All("VirtualMachine") {
		if vm := e.(*simulator.VirtualMachine); vm.Name == name {
			return vm
		}
	}
	return nil
}

// PowerOn powers a VM on through the API.
func (s *Sim) PowerOn(ctx context.Context, name string) error {
	return s.power(ctx, name, (*object.VirtualMachine).PowerOn)
}

// PowerOff powers a VM off through the API (a hard power-off).
func (s *Sim) PowerOff(ctx context.Context, name string) error {
	return s.power(ctx, name, (*object.VirtualMachine).PowerOff)
}

// power runs a power operation on the VM named name and waits for its task.
func (s *Sim) power(ctx context.Context, name string, op func(*object.VirtualMachine, context.Context) (*object.Task, error)) error {
	c, err := s.Client(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Logout(ctx) }()
	vm, err := find.NewFinder(c.Client).VirtualMachine(ctx, name)
	if err != nil {
		return err
	}
	t, err := op(vm, ctx)
	if err != nil {
		return err
	}
	return t.Wait(ctx)
}

// EditVM changes a simulated VM in place, without an API call (as if it had
// been edited by hand behind rdggen's back); f runs with the VM locked.
// It reports whether the VM exists.
func (s *Sim) EditVM(name string, f func(vm *simulator.VirtualMachine)) bool {
	vm := s.VM(name)
	if vm == nil {
		return false
	}
	s.Lock(vm.Self, func() { f(vm) })
	return true
}

// ReconfigVM is EditVM as another vSphere client's reconfiguration: after
// f, the VM's config.changeVersion and config.modified move on, as
// vCenter moves them on every reconfiguration (vcsim's own
// ReconfigVM_Task does the same: a new changeVersion of the time in
// nanoseconds). It reports whether the VM exists.
func (s *Sim) ReconfigVM(name string, f func(vm *simulator.VirtualMachine)) bool {
	return s.EditVM(name, func(vm *simulator.VirtualMachine) {
		f(vm)
		now := time.Now()
		vm.Config.ChangeVersion = strconv.FormatInt(now.UnixNano(), 10)
		vm.Config.Modified = now
	})
}

// SetRebootRequired sets an ESXi host's summary.rebootRequired
// (HostListSummary.rebootRequired, vSphere Web Services API: "whether or not
// the host requires a reboot due to a configuration change").
func (s *Sim) SetRebootRequired(esxi string, required bool) {
	h := s.hosts[esxi]
	s.Lock(h.Self, func() { h.Summary.RebootRequired = required })
}

// SetNUMA makes an ESXi host report its PCI devices per NUMA node
// (hardware.numaInfo.numaNode[].pciId, "Segment:Bus:Device.Function"), as
// ESXi does on a multi-socket server: node maps a PCI address to its node
// id. vcsim's host has one node and lists no devices.
func (s *Sim) SetNUMA(esxi string, node map[string]int) {
	h := s.hosts[esxi]
	byNode := map[int][]string{}
	for id, n := range node {
		byNode[n] = append(byNode[n], id)
	}
	info := &types.HostNumaInfo{Type: "NUMA", NumNodes: int32(len(byNode))}
	for n := 0; len(info.NumaNode) < len(byNode); n++ {
		if ids, ok := byNode[n]; ok {
			slices.Sort(ids)
			info.NumaNode = append(info.NumaNode, types.HostNumaNode{TypeId: byte(n), PciId: ids})
		}
	}
	s.Lock(h.Self, func() {
		hw := *h.Hardware
		hw.NumaInfo = info
		h.Hardware = &hw
	})
}

// AddVM creates a VM that is not in the inventory on an ESXi host, with the
// given host GPUs passed through (to make them "in use").
func (s *Sim) AddVM(ctx context.Context, name, esxi string, pci ...string) error {
	c, err := s.Client(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Logout(ctx) }()
	_, folders, pool, err := placement(ctx, c)
	if err != nil {
		return err
	}
	h := s.hosts[esxi]
	spec := types.VirtualMachineConfigSpec{
		Name: name, GuestId: "ubuntu64Guest", NumCPUs: 2, MemoryMB: 4096,
		Files: &types.VirtualMachineFileInfo{VmPathName: "[LocalDS_0]"},
	}
	for i, id := range pci {
		var dev types.HostPciDevice
		for _, d := range h.Hardware.PciDevice {
			if d.Id == id {
				dev = d
			}
		}
		spec.DeviceChange = append(spec.DeviceChange, &types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd,
			Device: &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
				Key: int32(-10 - i),
				Backing: &types.VirtualPCIPassthroughDeviceBackingInfo{
					Id: id, DeviceId: fmt.Sprintf("%x", uint16(dev.DeviceId)), VendorId: dev.VendorId, SystemId: SystemID(esxi),
				},
			}},
		})
	}
	t, err := folders.VmFolder.CreateVM(ctx, spec, pool, object.NewHostSystem(c.Client, h.Self))
	if err != nil {
		return err
	}
	return t.Wait(ctx)
}

// Reset puts every inventory VM and host back to how New made them (firmware
// bios, no pciPassthru keys, no reservation, no GPUs or SR-IOV adapters;
// passthrough and SR-IOV off; no module parameters), without API calls — for
// benchmarks that measure a first apply repeatedly. Each VM gets a new
// config.changeVersion, as a reconfiguration would give it.
func (s *Sim) Reset() {
	lock := &simulator.Context{}
	for i := range s.inv.Hosts {
		vm := s.VM(s.inv.Hosts[i].VM)
		if vm == nil {
			continue
		}
		s.Model.Map().WithLock(lock, vm.Self, func() {
			vm.Config.Firmware = "bios"
			var ec []types.BaseOptionValue
			for _, o := range vm.Config.ExtraConfig {
				if k := o.GetOptionValue().Key; k != vmx.KeyUse64bitMMIO && k != vmx.KeyMMIOSizeGB {
					ec = append(ec, o)
				}
			}
			vm.Config.ExtraConfig = ec
			vm.Config.MemoryReservationLockedToMax = types.NewBool(false)
			if vm.Config.MemoryAllocation != nil {
				vm.Config.MemoryAllocation.Reservation = types.NewInt64(0)
			}
			var devs []types.BaseVirtualDevice
			for _, d := range vm.Config.Hardware.Device {
				switch d.(type) {
				case *types.VirtualPCIPassthrough, *types.VirtualSriovEthernetCard:
					continue
				}
				devs = append(devs, d)
			}
			vm.Config.Hardware.Device = devs
			// Every reconfiguration changes the change version (as
			// ReconfigVM_Task does); apply's record relies on it.
			vm.Config.ChangeVersion = strconv.FormatInt(time.Now().UnixNano(), 10)
		})
	}
	for _, h := range s.hosts {
		s.Model.Map().WithLock(lock, h.Self, func() {
			h.Summary.RebootRequired = false
			for _, pi := range h.Config.PciPassthruInfo {
				switch pi := pi.(type) {
				case *types.HostSriovInfo:
					pi.SriovEnabled, pi.SriovActive, pi.NumVirtualFunction, pi.NumVirtualFunctionRequested = false, false, 0, 0
				case *types.HostPciPassthruInfo:
					pi.PassthruEnabled, pi.PassthruActive = false, false
				}
			}
		})
	}
	s.Modules.Reset()
}

// Inventory builds a valid inventory of hosts ESXi hosts with vmsPerHost VMs
// each (2 V100 16 GB per VM, with pci addresses when several VMs share a host
// so apply need not guess), each ESXi host on one port of SN4600C switches of 64 ports.
func Inventory(hosts, vmsPerHost int) (*inventory.Inventory, error) {
	var b strings.Builder
	n := hosts * vmsPerHost
	b.WriteString("name: bench\nswitches:\n")
	switches := (hosts + 63) / 64
	for i := 0; i < switches; i++ {
		fmt.Fprintf(&b, "  - {name: sw-%d, model: SN4600C, onyx: 3.10.2000}\n", i)
	}
	b.WriteString("docker: {pool: 172.16.0.0/12, prefix: 24}\n")
	fmt.Fprintf(&b, "defaults:\n  os: ubuntu-20.04\n  data_interface: enp1f0\n  gpus:\n    - {model: V100-PCIE-16GB, memory_gb: 16}\n    - {model: V100-PCIE-16GB, memory_gb: 16}\n  nic: {model: ConnectX-5, pf: vmnic4, vfs: %d}\n", max(8, vmsPerHost))
	b.WriteString("hosts:\n")
	for i := 0; i < n; i++ {
		e, k := i/vmsPerHost, i%vmsPerHost
		fmt.Fprintf(&b, "  - name: vm-%d\n    esxi: esx-%d.example\n", i, e)
		// VMs on one ESXi host share its NIC's uplink, so its switch port.
		fmt.Fprintf(&b, "    data: {address: 10.0.%d.%d/16, switch: sw-%d, port: 1/%d}\n", (i+1)/256, (i+1)%256, e/64, e%64+1)
		if vmsPerHost > 1 {
			fmt.Fprintf(&b, "    gpus:\n      - {model: V100-PCIE-16GB, memory_gb: 16, pci: \"%s\"}\n      - {model: V100-PCIE-16GB, memory_gb: 16, pci: \"%s\"}\n",
				GPUAddress(2*k), GPUAddress(2*k+1))
		}
	}
	return inventory.Load("bench.yaml", []byte(b.String()))
}

// placement finds where the simulator's VMs go: a finder set to the default
// datacenter, its folders and the default resource pool.
func placement(ctx context.Context, c *govmomi.Client) (*find.Finder, *object.DatacenterFolders, *object.ResourcePool, error) {
	f := find.NewFinder(c.Client, true)
	dc, err := f.DefaultDatacenter(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	f.SetDatacenter(dc)
	folders, err := dc.Folders(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	pool, err := f.DefaultResourcePool(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, folders, pool, nil
}
