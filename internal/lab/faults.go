package lab

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/switchos"
)

// FaultShapes are the faults a person stages (`rdggen lab fault`), each
// with its arguments.
const FaultShapes = "hide-gpu VM | mtu HOST|SWITCH:PORT N | lose-answer SWITCH | miswire SWITCH:PORT SWITCH:PORT | stop-bgp SWITCH | link-down SWITCH:PORT | link-speed SWITCH:PORT GBPS | repair"

// CheckFault refuses, before anything is sent, a fault a person cannot
// stage: an unknown name, the wrong number of arguments (FaultShapes), a
// SWITCH:PORT that is not one (link-down's, link-speed's, miswire's: no
// colon, or nothing on a side of it; mtu's, whose target with a colon is a
// SWITCH:PORT and without one a HOST: nothing on a side of the colon) or a
// value that is not one (mtu's N, link-speed's GBPS): usage errors, which
// need no lab to tell. Whether the switch, port and host exist is the lab's
// to tell.
func CheckFault(args []string) error {
	n := map[string]int{"hide-gpu": 2, "mtu": 3, "lose-answer": 2, "miswire": 3, "stop-bgp": 2, "link-down": 2, "link-speed": 3, "repair": 1}
	if len(args) == 0 || n[args[0]] == 0 {
		return fmt.Errorf("unknown fault %q: the faults are %s", strings.Join(args, " "), FaultShapes)
	}
	if len(args) != n[args[0]] {
		return fmt.Errorf("fault %q: the faults are %s", strings.Join(args, " "), FaultShapes)
	}
	var err error
	switch args[0] {
	case "mtu":
		if _, _, err = mtuTarget(args[1]); err == nil {
			_, err = parseMTU(args[1], args[2])
		}
	case "link-down":
		_, _, err = splitEnd(args[0], args[1])
	case "link-speed":
		if _, _, err = splitEnd(args[0], args[1]); err == nil {
			_, err = parseGbps(args[2])
		}
	case "miswire":
		if _, _, err = splitEnd(args[0], args[1]); err == nil {
			_, _, err = splitEnd(args[0], args[2])
		}
	}
	return err
}

// splitEnd reads a fault's SWITCH:PORT (fault names the fault in the
// error): a switch name and a port name (swp63, 1/31), neither empty.
func splitEnd(fault, arg string) (sw, port string, err error) {
	sw, port, ok := strings.Cut(arg, ":")
	if !ok || sw == "" || port == "" {
		return "", "", endError(fault, arg)
	}
	return sw, port, nil
}

// endError is the error of a SWITCH:PORT that is not one, or whose switch
// the inventory does not have.
func endError(fault, arg string) error {
	return fmt.Errorf("%s: %q: want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)", fault, arg)
}

// mtuTarget reads mtu's target: a SWITCH:PORT (sw and port set) when it
// has a colon, else a HOST (sw and port empty).
func mtuTarget(arg string) (sw, port string, err error) {
	if !strings.Contains(arg, ":") {
		return "", "", nil
	}
	return splitEnd("mtu", arg)
}

// parseMTU reads mtu's N for target (HOST or SWITCH:PORT): 68-9216 bytes,
// IPv4's least (RFC 791) to the switches' largest.
func parseMTU(target, n string) (int, error) {
	v, err := strconv.Atoi(n)
	if err != nil || v < 68 || v > 9216 {
		return 0, fmt.Errorf("mtu %s %s: want HOST or SWITCH:PORT and an MTU of 68-9216 bytes", target, n)
	}
	return v, nil
}

// parseGbps reads link-speed's GBPS: 1-1600 Gb/s, with or without a G
// ("100", "400G").
func parseGbps(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(s, "G"), "g"))
	if err != nil || v < 1 || v > 1600 {
		return 0, fmt.Errorf("link-speed: %q: want a speed of 1-1600 Gb/s (100, 400G)", s)
	}
	return v, nil
}

// Faults are the control socket's requests (`rdggen lab fault`):
//
//	hide-gpu VM          the VM loses its last GPU passthrough device in vCenter, as if
//	                     edited by hand (check: esxi's gpus; apply adds it back)
//	mtu HOST N           the namespace host's data interface MTU becomes N (ip link set)
//	mtu SWITCH:PORT N    the switch port's MTU becomes N, as a person at the switch sets
//	                     it (its OS's switchos.LabSwitch.SetMTU: on ONYX `interface
//	                     ethernet P mtu N force`; on Cumulus an NVUE revision applied
//	                     with `interface swpP link mtu N`)
//	lose-answer SWITCH   a switch whose simulator can (switchos.Lab.LosesAnswers: Cumulus)
//	                     applies the next change rdggen applies, and the connection drops
//	                     before its answer
//	miswire A B          the cables at two fabric.links ports A and B (SWITCH:PORT) are
//	                     swapped: A goes to B's far end and B to A's (fabricnet Unplug, Plug)
//	stop-bgp SWITCH      the switch's bgpd stops, as a crash would (fabricnet StopDaemon)
//	link-down SWITCH:PORT the port set administratively down (ip link set down), its far end loses carrier
//	link-speed SWITCH:PORT GBPS
//	                     the port's link, both its ends, runs at GBPS (fabricnet SetSpeed),
//	                     at most the speed the inventory plans for it (speedFault)
//	repair               the fabric's faults undone: the cables not as planned cabled so
//	                     again, ports up at their planned speeds, bgpd started where it
//	                     stopped; what is as planned is left alone
//	power-on [VM...]     power the VMs (default all) on or off, as a person does in
//	power-off [VM...]    vSphere (rdggen never powers a VM off; a device change needs it)
//	stop                 the supervisor stops (lab down sends SIGTERM instead)
func (s *supervisor) fault(args []string) (string, error) {
	if len(args) == 0 {
		return "", errUsage
	}
	if msg, ok, err := s.fabricFault(args); ok {
		return msg, err
	}
	switch {
	case args[0] == "hide-gpu" && len(args) == 2:
		return s.hideGPU(args[1])
	case args[0] == "mtu" && len(args) == 3:
		sw, port, err := mtuTarget(args[1])
		if err != nil {
			return "", err
		}
		n, err := parseMTU(args[1], args[2])
		if err != nil {
			return "", err
		}
		if sw == "" {
			return s.hostMTU(args[1], n)
		}
		return s.mtu(sw, port, n)
	case args[0] == "lose-answer" && len(args) == 2:
		sw, ok := s.switches[args[1]]
		switch {
		case !ok:
			return "", fmt.Errorf("lose-answer: no switch %q in the inventory", args[1])
		case !sw.os.Lab.LosesAnswers:
			var can []string
			for _, os := range switchos.All() {
				if os.Lab.LosesAnswers {
					can = append(can, os.OS.Short())
				}
			}
			short := sw.os.OS.Short()
			return "", fmt.Errorf("lose-answer: %s is an %s switch; the %s simulator cannot lose answers (%s switches only)", args[1], short, short, strings.Join(can, ", "))
		}
		return sw.LoseAnswer(), nil
	case args[0] == "power-on" || args[0] == "power-off":
		return s.power(args[0] == "power-on", args[1:])
	case args[0] == "stop" && len(args) == 1:
		s.once.Do(func() { close(s.stop) })
		return "stopping", nil
	}
	return "", errUsage
}

// hideGPU removes the VM's last GPU passthrough device (the PF's VF
// adapter is a VirtualSriovEthernetCard and stays), as another client's
// reconfiguration would: the VM's change version moves on.
func (s *supervisor) hideGPU(vm string) (string, error) {
	var removed string
	found := s.vc.ReconfigVM(vm, func(v *simulator.VirtualMachine) {
		devs := v.Config.Hardware.Device
		for i := len(devs) - 1; i >= 0; i-- {
			p, ok := devs[i].(*types.VirtualPCIPassthrough)
			if !ok {
				continue
			}
			if b, ok := p.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo); ok {
				removed = b.Id
			} else {
				removed = fmt.Sprintf("device %d", p.Key)
			}
			v.Config.Hardware.Device = append(devs[:i:i], devs[i+1:]...)
			return
		}
	})
	switch {
	case !found:
		return "", fmt.Errorf("hide-gpu: no VM %q in vCenter", vm)
	case removed == "":
		return "", fmt.Errorf("hide-gpu: VM %s has no GPU passed through (run rdggen apply --target esxi first)", vm)
	}
	return fmt.Sprintf("VM %s lost its GPU %s", vm, removed), nil
}

// mtu sets a switch port's MTU behind rdggen's back, as a person at the
// switch would (switchos.LabSwitch.SetMTU).
func (s *supervisor) mtu(sw, port string, n int) (string, error) {
	srv, ok := s.switches[sw]
	if !ok {
		return "", fmt.Errorf("mtu: no switch %q in the inventory", sw)
	}
	return srv.SetMTU(port, n)
}

// power powers the named VMs, or every VM of the inventory, on or off.
func (s *supervisor) power(on bool, vms []string) (string, error) {
	verb, want := "power-off", types.VirtualMachinePowerStatePoweredOff
	if on {
		verb, want = "power-on", types.VirtualMachinePowerStatePoweredOn
	}
	if len(vms) == 0 {
		for _, h := range s.inv.Hosts {
			vms = append(vms, h.VM)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var done []string
	for _, vm := range vms {
		v := s.vc.VM(vm)
		if v == nil {
			return "", fmt.Errorf("%s: no VM %q in vCenter", verb, vm)
		}
		var state types.VirtualMachinePowerState
		s.vc.Lock(v.Self, func() { state = v.Runtime.PowerState })
		if state == want {
			continue
		}
		op := s.vc.PowerOff
		if on {
			op = s.vc.PowerOn
		}
		if err := op(ctx, vm); err != nil {
			return "", fmt.Errorf("%s %s: %w", verb, vm, err)
		}
		done = append(done, vm)
	}
	if len(done) == 0 {
		return fmt.Sprintf("%s: nothing to do", verb), nil
	}
	return fmt.Sprintf("%s: %d VM(s): %s", verb, len(done), strings.Join(done, ", ")), nil
}

// hostMTU sets a namespace host's data interface MTU behind rdggen's back.
func (s *supervisor) hostMTU(name string, n int) (string, error) {
	if s.hosts == nil {
		return "", fmt.Errorf("mtu %s: no namespace hosts in this lab (mtu SWITCH:PORT N for a switch port)", name)
	}
	for _, h := range s.hosts.cluster.Hosts {
		if h.Name != name {
			continue
		}
		dev := s.inv.Hosts[h.Index].DataInterface
		if out, err := s.hosts.cluster.Exec(h.NS, "ip", "link", "set", "dev", dev, "mtu", strconv.Itoa(n)); err != nil {
			return "", fmt.Errorf("mtu %s: %v: %s", name, err, strings.TrimSpace(out))
		}
		return fmt.Sprintf("%s: %s mtu %d", name, dev, n), nil
	}
	return "", fmt.Errorf("mtu: no host %q in the inventory (mtu SWITCH:PORT N for a switch port)", name)
}
