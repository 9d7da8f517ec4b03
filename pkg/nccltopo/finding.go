package nccltopo

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rdggen/rdggen/pkg/quote"
)

// Severity says whether NCCL misreads what a Finding names (Error) or
// reads it, but not as a reader of the file would expect (Warning).
type Severity uint8

const (
	// Error: NCCL fails to load the file, or loads something other than
	// what it says. A file with an Error is not to be installed.
	Error Severity = iota + 1
	// Warning: NCCL ignores it, fills it in by itself, or only older
	// releases misread it.
	Warning
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return fmt.Sprintf("severity(%d)", uint8(s))
}

// Rule names a check; the names are stable (tests and callers match on
// them) and each is a section of docs/nccl-topology.md.
type Rule string

// The rules Validate and CheckGuest apply.
const (
	RuleParse        Rule = "parse"             // NCCL's reader stops: its communicator init fails
	RuleLimit        Rule = "limit"             // beyond NCCL's MAX_STR_LEN, MAX_ATTR_COUNT, MAX_SUBS or node count
	RuleQuote        Rule = "quote"             // single quotes, read since NCCL 2.27 only
	RuleSystem       Rule = "system"            // no <system>, or more than one
	RuleVersion      Rule = "version"           // version missing or not 1
	RuleUnknown      Rule = "unknown"           // an element or attribute NCCL ignores
	RuleDuplicate    Rule = "duplicate"         // an attribute given twice, a bus ID or NUMA id used twice
	RuleCPU          Rule = "cpu"               // numaid, arch, vendor, familyid, modelid
	RuleAffinity     Rule = "affinity"          // the CPU mask
	RuleBusID        Rule = "bus-id"            // missing or malformed busid
	RuleClass        Rule = "class"             // missing, malformed, or children NCCL ignores
	RuleLinkSpeed    Rule = "link-speed"        // missing, or not in NCCL's table (NCCL takes Gen3)
	RuleLinkWidth    Rule = "link-width"        // missing or not a width
	RuleBottleneck   Rule = "bridge-bottleneck" // a bridge slower than a device under it (NVIDIA/nccl#749)
	RuleSharedLink   Rule = "shared-nic-link"   // NICs sharing one link to their GPUs (NVIDIA/nccl#439)
	RuleNICAddress   Rule = "nic-address"       // a NIC NCCL looks up under another address
	RuleGPUNoNIC     Rule = "gpu-without-nic"   // GPUs whose CPU has no NIC
	RuleRuntime      Rule = "runtime-filled"    // what NCCL normally detects itself, pinned by the file
	RuleGuestMissing Rule = "guest-missing"     // CheckGuest: a bus ID the guest lacks
	RuleGuestClass   Rule = "guest-class"       // CheckGuest: another device class in the guest
	RuleGuestGPU     Rule = "guest-unlisted-gpu"
)

// Finding is one thing NCCL would refuse or misread in a topology file.
type Finding struct {
	Severity Severity
	Rule     Rule
	// Line and Col are the 1-based position (Col in bytes) of the element
	// or attribute; 0 for the file as a whole.
	Line, Col int
	// Path names the element: system/cpu[numaid=0]/pci[busid=ffff:ff:01.0];
	// "" for the file as a whole.
	Path string
	// Message says what NCCL does with it and why that is wrong.
	Message string
	// Source is where NCCL's behaviour is read or reported: a file and
	// function of NVIDIA/nccl at NCCLCommit, or an NVIDIA/nccl issue.
	Source string
}

// Format is the finding on one line, "file:line:col: error: path: message
// [rule; source]"; file may be "". Text from the file is escaped
// (quote.Terminal), so a finding cannot make a second line.
func (f Finding) Format(file string) string {
	var b strings.Builder
	b.WriteString(file)
	if f.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", f.Line, f.Col)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(f.Severity.String())
	b.WriteString(": ")
	if f.Path != "" {
		b.WriteString(quote.Terminal(f.Path))
		b.WriteString(": ")
	}
	b.WriteString(quote.Terminal(f.Message))
	fmt.Fprintf(&b, " [%s; %s]", f.Rule, f.Source)
	return b.String()
}

// String is Format without a file name.
func (f Finding) String() string { return f.Format("") }

// HasErrors says whether any finding is an Error.
func HasErrors(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity == Error })
}

// sortFindings orders findings by position, then rule and message, so
// that the same file always gives the same list.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col),
			cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
}
