package bench

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// vsphereClaims are the words of a cause that hold only in a vSphere VM of
// an rdggen cluster: its passthrough settings, "the VM", rdggen's own
// commands.
var vsphereClaims = regexp.MustCompile(`VMX|pciPassthru|vSphere|\bVMs?\b|passthrough|rdggen (check|bench|apply)`)

// allCauses is every cause of vs, one per line.
func allCauses(vs []Verdict) string {
	var b strings.Builder
	for _, v := range vs {
		for _, c := range v.Causes {
			b.WriteString(c.Line() + "\n")
		}
	}
	return b.String()
}

// TestCausesNeedEvidenceOfVSphere: the AWS EFA run (aws-ofi-nccl,
// "Using network AWS Libfabric", receive channels without /GDRDMA, no VM
// in sight) gets no cause of a vSphere VM and no nvidia-peermem, with or
// without an inventory: its network is a plugin's, which decides GPUDirect
// RDMA itself. A NET/IB log gets the VM's causes and `rdggen check` only
// with evidence of an rdggen (vSphere) cluster: an inventory
// (Expect.VSphere) or `rdggen check` results; without, its peer-memory
// cause stays (that is NET/IB's), in words that hold on any host.
func TestCausesNeedEvidenceOfVSphere(t *testing.T) {
	efa := read(t, "nccltests-eksefa-awslibfabric-g4dn.txt")
	elsewhere := Expect{GIDIndex: -1}
	for name, e := range map[string]Expect{"no inventory": elsewhere, "the reference inventory": ExpectFor(inventory.Reference(), 0)} {
		_, vs, err := Judge(efa, e)
		if err != nil {
			t.Fatal(err)
		}
		text := allCauses(vs)
		if m := vsphereClaims.FindString(text); m != "" || strings.Contains(text, "modprobe") || !strings.Contains(text, "NET/AWS Libfabric") {
			t.Errorf("%s: a cause claims %q:\n%s", name, m, text)
		}
	}

	// the same channels over NCCL's own verbs transport
	ib := []byte(strings.NewReplacer("AWS Libfabric", "IB", "NET/OFI", "NET/IB").Replace(string(efa)))
	_, vs, _ := Judge(ib, elsewhere)
	if text := allCauses(vs); vsphereClaims.MatchString(text) || !strings.Contains(text, "lsmod | grep peermem") {
		t.Errorf("NET/IB from elsewhere:\n%s", text)
	}
	for name, e := range map[string]Expect{
		"an inventory":  {GIDIndex: -1, VSphere: true},
		"check results": {GIDIndex: -1, Evidence: []readiness.Result{{Target: readiness.TargetHosts, Check: EvidenceGPUs, Status: readiness.Passed}}},
	} {
		_, vs, _ := Judge(ib, e)
		if text := allCauses(vs); !strings.Contains(text, "pciPassthru.allowP2P") || !strings.Contains(text, "run `rdggen check`") {
			t.Errorf("NET/IB with %s:\n%s", name, text)
		}
	}

	// a log that cannot tell: `rdggen check` is offered only on an rdggen cluster
	one := read(t, "nccllog-4921-no-gdrdma.txt")
	if _, vs, _ := Judge(one, elsewhere); strings.Contains(allCauses(vs), "rdggen check") {
		t.Errorf("4921 from elsewhere:\n%s", allCauses(vs))
	}
	if _, vs, _ := Judge(one, Expect{GIDIndex: -1, VSphere: true}); !strings.Contains(allCauses(vs), "or run `rdggen check` (hosts peermem, esxi p2p)") {
		t.Errorf("4921 on vSphere:\n%s", allCauses(vs))
	}
	if e := ExpectFor(nil, 100); e.VSphere {
		t.Error("ExpectFor(nil) claims vSphere")
	}
}
