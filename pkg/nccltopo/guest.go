package nccltopo

import (
	"fmt"
	"slices"
	"strings"
)

// srcGuest is the rule behind CheckGuest: NCCL finds a device's node in the
// file by its bus ID, and for a device it finds there keeps the file's
// parents; everything else it places from sysfs.
const srcGuest = srcBusID + "; " + srcFill

// CheckGuest compares a topology file with the PCI devices one guest has,
// for `check`: guest maps each bus ID (any case, "0000:0b:00.0") to its
// PCI class as sysfs, lspci -n or NormalizeClass print it ("0x020000",
// "0200"). It returns, sorted by position:
//
//   - an Error for each GPU, NIC or other device of the file whose bus ID
//     the guest lacks (RuleGuestMissing): NCCL never matches that node
//     (a file written for another VM, or a device that moved), and the real
//     device lands behind its own virtual root port, paired with nothing;
//     the file's bridges are exempt, their bus IDs exist in no guest;
//   - an Error for a bus ID that is another kind of device in the guest (a
//     GPU in the file, a NIC in the guest; a bridge in the file, a device in
//     the guest), and a Warning when only the class differs within a kind,
//     as NCCL takes the guest's class from sysfs (RuleGuestClass);
//   - a Warning for each 3D controller (class 0x0302xx, a datacenter GPU)
//     of the guest the file does not name (RuleGuestGPU). VGA-class
//     devices are left out: the VM's own SVGA adapter is one.
//
// A file NCCL cannot read gives its RuleParse finding only. An error is a
// guest entry whose bus ID or class does not parse.
func CheckGuest(file []byte, guest map[string]string) ([]Finding, error) {
	devs := map[string]Class{}
	for id, class := range guest {
		b, err := ParseBusID(strings.ToLower(id))
		if err != nil {
			return nil, fmt.Errorf("guest device: %v", err)
		}
		c, err := NormalizeClass(class)
		if err != nil {
			return nil, fmt.Errorf("guest device %s: %v", b, err)
		}
		devs[b.String()] = c
	}
	top, _, fatal := parse(file)
	if fatal != nil {
		return []Finding{*fatal}, nil
	}
	_, loaded := mark(top)
	v := &validator{}
	named := map[string]bool{}
	for _, p := range loaded {
		if p.name != "pci" {
			continue
		}
		a, ok := p.get("busid")
		if !ok {
			continue
		}
		if _, err := ParseBusID(a.val); err != nil {
			continue
		}
		named[a.val] = true
		t := classType(p)
		fileClass := firstVal(p, "class")
		g, present := devs[a.val]
		switch {
		case !present && t == typePCI:
			// the file's own bridge
		case !present:
			v.at(p, "busid", Error, RuleGuestMissing, srcGuest,
				"this guest has no PCI device %s: NCCL never matches this %s, and the real one lands behind its own virtual root port, paired with nothing (a file written for another VM, or a device that moved)", a.val, t)
		default:
			gt, _ := ncclClassType(g.String())
			if gt != t {
				v.at(p, "class", Error, RuleGuestClass, srcGuest+"; "+srcClass,
					"the file has a %s (class %s) at %s, this guest a %s (class %s)", t, clip(fileClass), a.val, gt, g)
			} else if fileClass != g.String() {
				v.at(p, "class", Warning, RuleGuestClass, srcGuest,
					"class %s in the file, %s in this guest: NCCL takes the guest's (from sysfs)", clip(fileClass), g)
			}
		}
	}
	var unlisted []string
	for id, c := range devs {
		if c>>8 == Class3D>>8 && !named[id] {
			unlisted = append(unlisted, id)
		}
	}
	slices.Sort(unlisted)
	for _, id := range unlisted {
		v.fs = append(v.fs, Finding{Severity: Warning, Rule: RuleGuestGPU, Source: srcGuest,
			Message: fmt.Sprintf("this guest's GPU %s is not in the file: NCCL places it from sysfs, behind its own virtual root port, with no NIC of the file beside it", id)})
	}
	sortFindings(v.fs)
	return v.fs, nil
}
