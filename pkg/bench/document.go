package bench

import (
	"encoding/json"
	"io"
)

// SchemaBench marks the document of `rdggen bench` (docs/json.md). Fields
// are only ever added under the same schema version.
const SchemaBench = "rdggen.bench/v2"

// Document is the outcome of `rdggen bench`, as `--output json` writes it.
type Document struct {
	Schema    string `json:"schema"`
	Cluster   string `json:"cluster"`
	Inventory string `json:"inventory"`
	// OK is true when every verdict of every input passed (the exit
	// status is then 0).
	OK bool `json:"ok"`
	// Expect is what the inputs were judged against.
	Expect DocumentExpect `json:"expect"`
	// Inputs are the judged inputs, in the order given.
	Inputs []Input `json:"inputs"`
}

// DocumentExpect is the expectation in the document.
type DocumentExpect struct {
	// LinkGbps is the data link speed, Gb/s; NICsPerNode the NICs per
	// node the busbw pass line counts.
	LinkGbps    float64 `json:"link_gbps"`
	NICsPerNode int     `json:"nics_per_node"`
	// MTU is the RDMA MTU expected in perftest headers, bytes (0: not
	// checked); GIDIndex the GID index (-1: not checked); LinkLayer the
	// link type ("": not checked).
	MTU       int    `json:"rdma_mtu,omitempty"`
	GIDIndex  int    `json:"gid_index"`
	LinkLayer string `json:"link_layer,omitempty"`
	// Evidence is how many `rdggen check` results were given.
	Evidence int `json:"evidence"`
	// LinkFrom, NICsFrom and MTUFrom say where the link speed, the NICs
	// per node and the RDMA MTU came from (a flag, the inventory, a
	// default); absent when not said.
	LinkFrom string `json:"link_gbps_from,omitempty"`
	NICsFrom string `json:"nics_per_node_from,omitempty"`
	MTUFrom  string `json:"rdma_mtu_from,omitempty"`
	// Rails are the rails of a multi-rail cluster, in rail order (absent
	// for one rail); NICsPerNode is then their count.
	Rails []DocumentRail `json:"rails,omitempty"`
}

// DocumentRail is one rail in the document's expectation.
type DocumentRail struct {
	// Rail is its number (0-based); LinkGbps its link speed, Gb/s.
	Rail     int     `json:"rail"`
	LinkGbps float64 `json:"link_gbps"`
	// HCA is the guest's RDMA device of the rail and GPUs the NVML
	// indexes of its GPUs, where known ([Rail]).
	HCA  string `json:"hca,omitempty"`
	GPUs []int  `json:"gpus,omitempty"`
}

// Input is one judged input: a file for --judge, a pair or the cluster run
// for a live run.
type Input struct {
	// Name is the file as given, or the run's name ("ib_write_bw clx-mld-41
	// → clx-mld-42").
	Name string `json:"name"`
	// Kind is what it was detected as. A file that holds several kinds
	// (or several nccl-tests runs) is one input per kind (per run), in the
	// order of [JudgeParts], each with the file's Name.
	Kind Kind `json:"kind"`
	// Part tells the inputs of one file apart when it holds several runs
	// of a kind: "run 2 of 3 (lines 118–240)"; absent otherwise.
	Part string `json:"part,omitempty"`
	// Error is why it could not be judged ("" otherwise); Verdicts is
	// then empty.
	Error    string    `json:"error,omitempty"`
	Verdicts []Verdict `json:"verdicts"`
}

// NewDocument starts a document for inputs judged against e.
func NewDocument(cluster, inventory string, e Expect) *Document {
	d := &Document{Schema: SchemaBench, Cluster: cluster, Inventory: inventory, Inputs: []Input{},
		Expect: DocumentExpect{LinkGbps: e.link(), NICsPerNode: e.nics(), MTU: e.MTU, GIDIndex: e.GIDIndex,
			LinkLayer: e.LinkLayer, Evidence: len(e.Evidence), LinkFrom: e.LinkFrom, NICsFrom: e.NICsFrom, MTUFrom: e.MTUFrom}}
	if e.multiRail() {
		for r, rail := range e.Rails {
			d.Expect.Rails = append(d.Expect.Rails, DocumentRail{Rail: r, LinkGbps: e.railLink(r), HCA: rail.HCA, GPUs: rail.GPUs})
		}
	}
	return d
}

// Add appends an input and updates OK.
func (d *Document) Add(in Input) {
	if in.Verdicts == nil {
		in.Verdicts = []Verdict{}
	}
	d.Inputs = append(d.Inputs, in)
	d.OK = len(d.Inputs) > 0
	for _, x := range d.Inputs {
		if x.Error != "" || !Passed(x.Verdicts) {
			d.OK = false
		}
	}
}

// Encode writes d as indented JSON (no HTML escaping) and a newline.
func (d *Document) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}
