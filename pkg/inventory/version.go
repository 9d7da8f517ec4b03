package inventory

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a dotted release number such as ONYX "3.6.8190", Docker "18.09"
// or Ubuntu "16.04". Components compare numerically ("18.09" < "18.10").
type Version struct {
	raw   string
	parts []int
}

// ParseVersion parses a dotted number of one to four numeric components.
func ParseVersion(s string) (Version, error) {
	fields := strings.Split(s, ".")
	if s == "" || len(fields) > 4 {
		return Version{}, fmt.Errorf("%q is not a dotted version number like 18.09 or 3.6.8190", s)
	}
	parts := make([]int, len(fields))
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || f == "" || f[0] == '+' {
			return Version{}, fmt.Errorf("%q is not a dotted version number like 18.09 or 3.6.8190", s)
		}
		parts[i] = n
	}
	return Version{raw: s, parts: parts}, nil
}

// zeroVersionError is what ParseVersion says of "", the text of the zero
// Version (a Spec's Version{} is refused as a file's "" is).
func zeroVersionError() error {
	_, err := ParseVersion("")
	return err
}

// MustVersion is ParseVersion for constants; it panics on a malformed string.
func MustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String returns the version as written.
func (v Version) String() string { return v.raw }

// IsZero reports whether v is unset.
func (v Version) IsZero() bool { return len(v.parts) == 0 }

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than the
// version given by parts; missing components count as 0.
func (v Version) Compare(parts ...int) int {
	n := max(len(v.parts), len(parts))
	for i := range n {
		a, b := 0, 0
		if i < len(v.parts) {
			a = v.parts[i]
		}
		if i < len(parts) {
			b = parts[i]
		}
		if a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Before reports whether v is older than w (missing components count as 0).
func (v Version) Before(w Version) bool { return v.Compare(w.parts...) < 0 }

// AtLeast reports whether v is parts or newer.
func (v Version) AtLeast(parts ...int) bool { return v.Compare(parts...) >= 0 }

// UnmarshalText parses a version ("3.6.8190"), so that a Spec also decodes
// with yaml.v3 or encoding/json directly.
func (v *Version) UnmarshalText(b []byte) error {
	p, err := ParseVersion(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// MarshalText writes the version as it was written.
func (v Version) MarshalText() ([]byte, error) { return []byte(v.raw), nil }
