package nccltopo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU is the highest CPU number NCCL's affinity can hold: its cpuset is
// glibc's cpu_set_t, CPU_SETSIZE = 1024 CPUs, read as 32 groups of 32
// (NVIDIA/nccl src/include/cpuset.h ncclStrToCpuset).
const MaxCPU = 1023

// maxMaskGroups is how many comma-separated 32-bit groups NCCL reads from an
// affinity: CPU_SETSIZE / 32; it drops the groups after the 32nd from the
// left, which are the lowest CPUs.
const maxMaskGroups = (MaxCPU + 1) / 32

// CPUSet is a set of CPU numbers (0–MaxCPU), kept sorted and without
// repeats by ParseCPUList and NewCPUSet.
type CPUSet []int

// NewCPUSet returns the set of cpus, sorted and without repeats; an error
// names a CPU outside 0–MaxCPU.
func NewCPUSet(cpus ...int) (CPUSet, error) {
	s := slices.Clone(cpus)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) > 0 && (s[0] < 0 || s[len(s)-1] > MaxCPU) {
		return nil, fmt.Errorf("CPU numbers must be 0–%d, got %v", MaxCPU, cpus)
	}
	return s, nil
}

// ParseCPUList reads a Linux CPU list, the format of
// /sys/devices/system/node/nodeN/cpulist and lscpu ("0-15,32-47"; "" is
// the empty set): comma-separated numbers and inclusive ranges a-b, each
// within 0–MaxCPU.
func ParseCPUList(list string) (CPUSet, error) {
	var cpus []int
	if strings.TrimSpace(list) == "" {
		return CPUSet{}, nil
	}
	for _, part := range strings.Split(strings.TrimSpace(list), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > MaxCPU {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number 0–%d", list, lo, MaxCPU)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > MaxCPU {
				return nil, fmt.Errorf("CPU list %q: %q is not a range a-b with %d ≤ b ≤ %d", list, part, a, MaxCPU)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return NewCPUSet(cpus...)
}

// String is the set as a Linux CPU list, "0-15,32-47".
func (s CPUSet) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			fmt.Fprintf(&b, "-%d", s[j])
		}
		i = j + 1
	}
	return b.String()
}

// Mask is the set in the Linux cpumask format NCCL reads for a <cpu>'s
// affinity (NVIDIA/nccl src/include/cpuset.h ncclStrToCpuset; the format
// of /sys/devices/system/node/nodeN/cpumap): groups of 8 lower-case hex
// digits, each 32 CPUs, separated by commas, the highest CPUs first, so
// CPUs 0–15 and 32–47 in 2 groups are "0000ffff,0000ffff". groups is the
// number of groups to write (at least the set needs, at most 32; Generate
// gives every <cpu> of a file the same count, as Linux does).
func (s CPUSet) Mask(groups int) string {
	groups = max(groups, s.groups())
	words := make([]uint32, groups)
	for _, c := range s {
		words[c/32] |= 1 << (c % 32)
	}
	parts := make([]string, groups)
	for i := range words {
		parts[groups-1-i] = fmt.Sprintf("%08x", words[i])
	}
	return strings.Join(parts, ",")
}

// groups is how many 32-bit groups the set needs (at least 1).
func (s CPUSet) groups() int {
	if len(s) == 0 {
		return 1
	}
	return s[len(s)-1]/32 + 1
}

// parseMask reads an affinity the way NCCL does, and refuses what NCCL
// would read differently from what it says: NCCL splits at commas with
// strtok (which skips empty fields, shifting every group after one), reads
// each field with strtoul base 16 into 32 bits (a longer field loses its
// high digits) and keeps the rightmost 32 fields. A field is therefore 1–8
// hex digits after an optional 0x.
func parseMask(mask string) (CPUSet, error) {
	if mask == "" {
		return CPUSet{}, nil
	}
	fields := strings.Split(mask, ",")
	if len(fields) > maxMaskGroups {
		return nil, fmt.Errorf("%d groups; NCCL reads at most %d (1024 CPUs) and drops the leftmost", len(fields), maxMaskGroups)
	}
	var cpus []int
	for i, f := range fields {
		h := strings.TrimPrefix(strings.TrimPrefix(f, "0x"), "0X")
		if h == "" {
			return nil, fmt.Errorf("group %d is empty; NCCL skips it and shifts the groups after it by 32 CPUs", i+1)
		}
		if len(h) > 8 {
			return nil, fmt.Errorf("group %q has more than 8 hex digits; NCCL keeps only its low 32 bits", f)
		}
		w, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return nil, fmt.Errorf("group %q is not 1–8 hex digits; NCCL's strtoul stops at the first other character", f)
		}
		base := (len(fields) - 1 - i) * 32
		for b := range 32 {
			if w&(1<<b) != 0 {
				cpus = append(cpus, base+b)
			}
		}
	}
	return NewCPUSet(cpus...)
}
