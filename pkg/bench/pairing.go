package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/nccltopo"
)

// railBusBWCauses explains a busbw below its line on a multi-rail
// cluster (e.Rails), after the NCCL log's own verdicts passed, from the
// rails' ib_write_bw verdicts (e.PairVerdicts, CheckRDMARail):
//
//   - a rail below its line: that rail holds the rings back (only: the
//     generic causes are replaced);
//   - every rail at its line: the network carries each rail, so NCCL's
//     pairing of GPUs with NICs is the cause (only);
//   - no rail verdicts (the rails were not measured with this run): the
//     pairing is named after the generic causes, as what to look at once
//     the rails pass.
func railBusBWCauses(l *NCCLLog, e Expect) (cs []Cause, only bool) {
	var slow, passed []int
	rails := 0
	for _, v := range e.PairVerdicts {
		if v.Check != CheckRDMARail || v.Rail == nil {
			continue
		}
		rails++
		switch v.Status {
		case StatusFail:
			slow = append(slow, *v.Rail)
		case StatusPass:
			passed = append(passed, *v.Rail)
		}
	}
	if len(slow) > 0 {
		return []Cause{{Layer: LayerFabric,
			Finding: fmt.Sprintf("%s below the line in ib_write_bw (the rdma-rail verdicts): NCCL's channels run over every rail at once, so a slow rail holds busbw down", railList(slow)+" "+isAre(len(slow))),
			Fix:     "fix what the rdma-rail verdicts of " + railList(slow) + " name (their hosts, ports and leaves), then rerun the bench"}}, true
	}
	all := rails > 0 && len(passed) == rails && rails >= len(e.Rails)
	if all && l.Empty() {
		return []Cause{{Layer: LayerBenchmark,
			Finding: "the output has no NCCL log, so the transport, GPUDirect RDMA and the NIC of each GPU cannot be checked",
			Fix:     "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV,GRAPH (-x with mpirun) and judge the whole output"}, pairingCause(l, e, all)}, true
	}
	return []Cause{pairingCause(l, e, all)}, all
}

// pairingCause names NCCL's GPU–NIC pairing and the topology file as the
// cause of a busbw below the line whose rails all pass (railsPassed), or
// as what to look at once they do; with what the log shows: the topology
// file NCCL read, and which NIC each GPU's channels used against the
// rails' GPUs and HCAs in e.Rails.
func pairingCause(l *NCCLLog, e Expect, railsPassed bool) Cause {
	vsphere := e.rdggenCluster()
	c := Cause{Layer: LayerPairing}
	var b strings.Builder
	if railsPassed {
		fmt.Fprintf(&b, "every rail passes ib_write_bw at its line (%s, the rdma-rail verdicts), yet busbw falls short of the rails' sum: the network carries each rail at line rate, so the shortfall lies between the GPUs and the NICs, in which NIC NCCL gives each GPU", railRange(len(e.Rails)))
	} else {
		b.WriteString("once every rail passes ib_write_bw at its line (rdggen bench runs the pairs rail by rail), a busbw short of the rails' sum lies between the GPUs and the NICs, in which NIC NCCL gives each GPU")
	}
	if vsphere {
		b.WriteString("; in a vSphere VM every passed-through device sits behind its own virtual root port, so without a topology file NCCL sees every GPU–NIC path as PHB and pairs GPUs with NICs by index, not by the PCIe switch they share")
	} else {
		b.WriteString("; NCCL gives each GPU the NIC nearest to it in the PCI topology it sees, and in a VM without a topology file every GPU–NIC path looks alike (PHB), so it pairs them by index, not by the PCIe switch they share")
	}
	b.WriteString(" (NVIDIA/nccl-tests#156: each NIC's ib_write_bw as on bare metal, all-reduce 76 instead of 96 GB/s; NVIDIA/nccl-tests#380, NVIDIA/nccl#439, #1303)")
	holds := false
	if l.Empty() {
		b.WriteString("; the output has no NCCL log to show which NIC each GPU used")
	} else {
		b.WriteString("; " + topoFileText(l))
		text, wrong, matched := mappingText(l, e)
		b.WriteString("; " + text)
		c.Hosts = wrong
		holds = matched
	}
	c.Finding = b.String()
	check := "`rdggen check --target hosts` for each VM's topology file (present at " + nccltopo.DefaultPath + ", valid, naming bus IDs the guest has) and `rdggen apply --target hosts` to write it; leave NCCL_TOPO_FILE unset unless it names that file"
	if !vsphere {
		check = "give NCCL the PCI topology in a topology file at " + nccltopo.DefaultPath + " (or NCCL_TOPO_FILE) whose bridges group each GPU with its rail's NIC, with the bus IDs the guest has"
	}
	c.Fix = check + "; then rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH and read 'Loading topology file …', 'NET/IB : Using [0]mlx5_0:1/RoCE [1]…' and each GPU's channels 'via NET/IB/<n>': every GPU on its own rail's NIC"
	switch {
	case holds && vsphere:
		c.Fix = "the pairing holds, so check the GPU–NIC path: `rdggen check --target esxi,hosts` (p2p: pciPassthru.allowP2P and RelaxACSforP2P; numa: each VF on its GPUs' NUMA node) and GPUDirect RDMA in the log (/GDRDMA on every channel)"
	case holds:
		c.Fix = "the pairing holds, so check the GPU–NIC path: PCIe peer-to-peer between each GPU and its NIC (ACS, ATS, the hypervisor's P2P settings) and GPUDirect RDMA in the log (/GDRDMA on every channel)"
	}
	return c
}

// railRange is "rails 0–3".
func railRange(n int) string {
	if n == 1 {
		return "rail 0"
	}
	return fmt.Sprintf("rails 0–%d", n-1)
}

// topoFileText says which topology file the log shows NCCL reading.
func topoFileText(l *NCCLLog) string {
	var parts []string
	env, set := l.EnvValue("NCCL_TOPO_FILE")
	switch {
	case set && env != nccltopo.DefaultPath:
		parts = append(parts, "the log shows NCCL_TOPO_FILE="+env+", which replaces NCCL's default path: "+nccltopo.DefaultPath+" is not read")
	case set:
		parts = append(parts, "the log shows NCCL_TOPO_FILE="+env+" (NCCL's default path)")
	}
	if len(l.TopoFiles) > 0 {
		files := map[string][]string{}
		var order []string
		for _, t := range l.TopoFiles {
			if _, ok := files[t.Text]; !ok {
				order = append(order, t.Text)
			}
			files[t.Text] = append(files[t.Text], orDefault(t.Host, "(no host)"))
		}
		for _, f := range order {
			parts = append(parts, "NCCL loaded "+f+" on "+Names(files[f]))
		}
		loaded := map[string]bool{}
		for _, t := range l.TopoFiles {
			loaded[t.Host] = true
		}
		var without []string
		for _, h := range l.Hosts {
			if !loaded[h] {
				without = append(without, h)
			}
		}
		if len(without) > 0 {
			parts = append(parts, "no 'Loading topology file' line from "+Names(without))
		}
	} else {
		parts = append(parts, "the log does not show whether NCCL read a topology file (it prints 'Loading topology file …' with NCCL_DEBUG_SUBSYS=GRAPH)")
	}
	return strings.Join(parts, "; ")
}

// maxMappings is how many distinct GPU–NIC mappings a cause spells out;
// hosts with the same mapping share one.
const maxMappings = 3

// mappingText says which NIC each GPU's channels used, per host (hosts
// with the same mapping together), against e.Rails: the hosts with a GPU
// on a NIC other than its rail's, and whether the log shows every
// GPU it names, and at least one, on its planned rail (matched).
func mappingText(l *NCCLLog, e Expect) (text string, wrong []string, matched bool) {
	gns := l.GPUNICs()
	if len(gns) == 0 {
		return "the log shows no GPU's network channel (NCCL_DEBUG_SUBSYS=INIT,NET prints 'NET/IB : Using [0]mlx5_0:1/RoCE [1]…' and each channel's 'via NET/IB/<n>')", nil, false
	}
	railOfHCA := map[string]int{}
	railOfGPU := map[int]int{}
	for r, rail := range e.Rails {
		if rail.HCA != "" {
			railOfHCA[rail.HCA] = r
		}
		for _, g := range rail.GPUs {
			railOfGPU[g] = r
		}
	}
	type hostMap struct {
		text   string
		misses []string
	}
	var hosts []string
	per := map[string]*hostMap{}
	checked, misses := 0, 0
	for _, g := range gns {
		hm := per[g.Host]
		if hm == nil {
			hm = &hostMap{}
			per[g.Host] = hm
			hosts = append(hosts, g.Host)
		}
		var nics []string
		for _, u := range g.NICs {
			s := fmt.Sprintf("NET/%s/%d", u.Net, u.Dev)
			var about []string
			if u.Name != "" {
				about = append(about, u.Name)
			}
			if r, ok := railOfHCA[u.Name]; ok && u.Name != "" {
				about = append(about, "rail "+strconv.Itoa(r))
			}
			if len(g.NICs) > 1 {
				about = append(about, strconv.Itoa(u.Lines)+" channel line(s)")
			}
			if len(about) > 0 {
				s += " (" + strings.Join(about, ", ") + ")"
			}
			nics = append(nics, s)
		}
		if hm.text != "" {
			hm.text += ", "
		}
		hm.text += g.label() + " → " + strings.Join(nics, " and ")
		idx, isIndex := g.index()
		planned, hasPlan := railOfGPU[idx]
		if !isIndex || !hasPlan {
			continue
		}
		var used []int // the rails of its NICs, -1 for a NIC of no rail
		known := len(railOfHCA) > 0
		for _, u := range g.NICs {
			if u.Name == "" {
				known = false
				break
			}
			r, ok := railOfHCA[u.Name]
			if !ok {
				r = -1
			}
			used = append(used, r)
		}
		if !known {
			continue
		}
		checked++
		if slices.ContainsFunc(used, func(r int) bool { return r != planned }) {
			misses++
			hm.misses = append(hm.misses, fmt.Sprintf("GPU %d (planned rail %d%s)", idx, planned, hcaOf(e, planned)))
		}
	}
	// hosts with the same mapping together
	type group struct {
		text   string
		hosts  []string
		misses []string
	}
	var groups []*group
	byText := map[string]*group{}
	for _, h := range hosts {
		hm := per[h]
		g := byText[hm.text]
		if g == nil {
			g = &group{text: hm.text, misses: hm.misses}
			byText[hm.text] = g
			groups = append(groups, g)
		}
		g.hosts = append(g.hosts, orDefault(h, "(no host)"))
		if len(hm.misses) > 0 {
			wrong = append(wrong, h)
		}
	}
	var b strings.Builder
	b.WriteString("the log shows ")
	for i, g := range groups {
		if i == maxMappings {
			fmt.Fprintf(&b, "; and %d other mapping(s)", len(groups)-maxMappings)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "on %s: %s", Names(g.hosts), g.text)
		if len(g.misses) > 0 {
			b.WriteString(": not its rail's NIC for " + strings.Join(g.misses, ", "))
		}
	}
	switch {
	case misses > 0:
		fmt.Fprintf(&b, "; %d of the %d GPU(s) the rails name use a NIC other than their rail's: the pairing is wrong there", misses, checked)
	case checked > 0:
		b.WriteString("; every GPU the rails name uses its own rail's NIC, as planned: the pairing holds in this log, so the shortfall lies on the GPU–NIC path itself (PCIe peer-to-peer through the host: ACS, ATS, the P2P passthrough settings), as in NVIDIA/nccl-tests#156")
		matched = true
	case len(e.Rails) > 0:
		b.WriteString("; the rails' GPUs and RDMA devices are not all known (or the log lacks 'NET/IB : Using'), so the pairing cannot be compared with the plan")
	}
	return b.String(), nonEmpty(wrong), matched
}

// hcaOf is ", mlx5_1" for rail r's HCA, "" when unknown.
func hcaOf(e Expect, r int) string {
	if r < len(e.Rails) && e.Rails[r].HCA != "" {
		return ", " + e.Rails[r].HCA
	}
	return ""
}
