// Package nccltopo writes and checks NCCL's topology file for a GPU VM: the
// XML that tells NCCL which GPUs share a PCIe switch with which rail NIC,
// because a vSphere guest shows every passthrough device behind its own
// virtual root port and NCCL would otherwise pair GPUs with NICs by index.
//
// It is pure: typed values or bytes in, bytes or findings out; nothing is
// read from or written to a machine here.
//
//   - [Generate] turns a [Topology] (CPUs with their NUMA id and CPU set;
//     under each, one group per PCIe switch holding GPUs and that group's
//     rail NICs, each with the guest's bus ID and its [Link]) into the file
//     NCCL loads by default from [DefaultPath].
//   - [Validate] reads a file the way NCCL's own reader does and returns a
//     [Finding] for everything NCCL would refuse or misread: a wrong
//     version, a link speed outside NCCL's table, a bridge slower than a
//     device under it (NVIDIA/nccl#749), two NICs sharing one link to their
//     GPUs (NVIDIA/nccl#439), malformed bus IDs, NCCL's size limits, and
//     (as warnings) what NCCL ignores or fills in by itself.
//   - [CheckGuest] compares a file with the PCI devices one guest has
//     (bus ID → class): bus IDs the guest lacks, wrong device classes.
//   - [IBHCA], [CrossNIC] and [RailOrder] give NCCL_IB_HCA in rail order
//     (with NCCL 2.30.7's rail labels when the image's NCCL has them) and
//     NCCL_CROSS_NIC from the cabling.
//
// Every rule is in docs/nccl-topology.md with its source. NCCL's reader
// was read at NVIDIA/nccl commit [NCCLCommit] (v2.30.7-1 plus 24 commits):
// src/graph/xml.cc, xml.h, topo.cc and topo.h; NCCL has no tool that
// parses the file without a GPU, so the rules are written out here.
package nccltopo

// DefaultPath is where NCCL looks for a topology file when NCCL_TOPO_FILE is
// unset (NVIDIA/nccl src/graph/topo.cc ncclTopoGetSystem; env.rst
// NCCL_TOPO_FILE, "since 2.6").
const DefaultPath = "/var/run/nvidia-topologyd/virtualTopology.xml"

// NCCLCommit is the NVIDIA/nccl commit whose reader the rules follow
// (2026-06-11, master after tag v2.30.7-1).
const NCCLCommit = "5067397c2676d5aed50042fc39e5c8ee96eb0027"

// Sources named in findings and documentation. The short commit is
// NCCLCommit's.
const (
	srcXMLReader = "NVIDIA/nccl src/graph/xml.cc@5067397c (xmlGetNode, xmlGetToken, xmlGetValue, xmlLoadSub)"
	srcXMLLimits = "NVIDIA/nccl src/graph/xml.h@5067397c (MAX_STR_LEN 255, MAX_ATTR_COUNT 16, MAX_SUBS 640), src/graph/topo.h (NCCL_TOPO_XML_MAX_NODES 256)"
	srcHandlers  = "NVIDIA/nccl src/graph/xml.cc@5067397c (ncclTopoXmlLoadSystem, …LoadCpu, …LoadPci, …LoadGpu, …LoadNic)"
	srcVersion   = "NVIDIA/nccl src/graph/xml.cc@5067397c (ncclTopoXmlLoadSystem: \"XML Topology has wrong version\"), xml.h NCCL_TOPO_XML_VERSION 1"
	srcSpeed     = "NVIDIA/nccl src/graph/topo.cc@5067397c (kvDictPciGen, ncclTopoAddPci: bw = width × speed / 80; xml.h kvConvertToInt)"
	srcClass     = "NVIDIA/nccl src/graph/topo.cc@5067397c (kvDictPciClass, ncclTopoAddPci)"
	srcCPU       = "NVIDIA/nccl src/graph/topo.cc@5067397c (ncclTopoAddCpu, kvDictCpuArch, kvDictCpuVendor), src/graph/xml.cc (ncclTopoGetXmlFromCpu)"
	srcAffinity  = "NVIDIA/nccl src/include/cpuset.h@5067397c (ncclStrToCpuset)"
	srcBusID     = "NVIDIA/nccl src/graph/xml.cc@5067397c (ncclTopoGetPciNode, checkBDFFormat), src/misc/utils.cc (int64ToBusId)"
	srcMergeVF   = "NVIDIA/nccl src/transport/net_ib/init.cc@5067397c (ncclIbGetPciPath; NCCL_IB_MERGE_VFS=1)"
	srcFill      = "NVIDIA/nccl src/graph/xml.cc@5067397c (ncclTopoGetXmlFromSys, ncclTopoGetXmlFromGpu, ncclTopoFillNet)"
	srcNCCL749   = "NVIDIA/nccl#749 (sjeaugey: \"the topology file you're injecting does define a bottleneck on the CPU-PCI connection\")"
	srcNCCL439   = "NVIDIA/nccl#439 (sjeaugey: \"both NICs under the same PCI lane … only 1 ring instead of 2, hence 24 GB/s instead of 48 GB/s\")"
	srcSearch    = "NVIDIA/nccl src/graph/search.cc@5067397c (followPath: each ring books its bandwidth on every link of its path)"
	srcLocalNet  = "NVIDIA/nccl src/graph/topo.cc@5067397c (ncclTopoGetLocalNet, ncclTopoGetLocalNetType)"
	srcEnv       = "NVIDIA/nccl docs/userguide/source/env.rst@5067397c"
)
