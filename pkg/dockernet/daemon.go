package dockernet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strconv"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Setting is one daemon.json key that rdggen owns, with its compact JSON value.
type Setting struct {
	Key   string
	Value []byte
}

// DaemonSettings returns the keys rdggen sets in host h's /etc/docker/daemon.json,
// in file order (docs/rules.md#docker-networking; docs/rules.md#docker-daemon-settings):
//   - bip: docker0's address with prefix, h.Bridge() (a host address, 172.16.41.1/24);
//   - fixed-cidr: h.Subnet, the range containers get addresses from;
//   - mtu: docker.mtu in bytes (an integer; dockerd rejects a string);
//   - dns: docker.dns (an array; dockerd rejects a single string);
//   - allow-direct-routing: true on Docker ≥ 28.2 only (moby/moby#49832), without
//     which Docker drops routed traffic to container addresses in the raw table.
//
// Never bridge (exclusive with bip) or hosts (clashes with systemd's -H fd://).
func DaemonSettings(inv *inventory.Inventory, h *inventory.Host) []Setting {
	s := []Setting{
		{"bip", jsonString(h.Bridge().String())},
		{"fixed-cidr", jsonString(h.Subnet.String())},
		{"mtu", []byte(strconv.Itoa(inv.Docker.MTU))},
		{"dns", dnsList(inv.Docker.DNS)},
	}
	if inv.Docker.AllowDirectRouting() {
		s = append(s, Setting{"allow-direct-routing", []byte("true")})
	}
	return s
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func dnsList(dns []netip.Addr) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, a := range dns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(jsonString(a.String()))
	}
	b.WriteByte(']')
	return b.Bytes()
}

// DaemonJSON is host h's daemon.json artifact: exactly DaemonSettings, one key
// per line. On a host it is never written as is but merged (Merge) into the
// existing file.
func DaemonJSON(inv *inventory.Inventory, h *inventory.Host) []byte {
	return formatObject(DaemonSettings(inv, h))
}

func formatObject(s []Setting) []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, kv := range s {
		b.WriteString("  ")
		b.Write(jsonString(kv.Key))
		b.WriteString(": ")
		b.Write(kv.Value)
		if i < len(s)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// Keys that Merge refuses to find in an existing daemon.json (docs/rules.md#docker-networking;
// docs/rules.md#what-dockerd-accepts, moby/moby#34460).
var refusedKeys = map[string]string{
	"bridge": `it is exclusive with "bip" (dockerd: "You specified -b & --bip, mutually exclusive options"); remove it`,
	"hosts":  `it clashes with the -H fd:// of Docker's systemd unit (dockerd: "directives are specified both as a flag and in the configuration file"); move it to a systemd drop-in`,
}

// Merge returns existing with every key of ours set: a key that existing
// already has with an equal value keeps its bytes, a key with another value has
// only its value replaced in place, and missing keys are appended after the
// last member with the file's own indentation. Every other key, and all
// whitespace around it, is kept byte for byte (nvidia-docker2's "runtimes",
// "default-runtime", "data-root", ...; docs/rules.md#merging-into-an-existing-file). Merge is
// stable: Merge(Merge(x, ours), ours) == Merge(x, ours).
//
// An absent or empty existing file (nil, or only whitespace) yields ours in
// DaemonJSON's layout. Merge refuses, with an error that says why and where,
// an existing file that is not JSON, whose top level is not an object, that
// repeats a key at any depth, or that sets "bridge" or "hosts".
func Merge(existing, ours []byte) ([]byte, error) {
	want, err := parseObject(ours)
	if err != nil {
		return nil, fmt.Errorf("rdggen's daemon.json: %w", err)
	}
	have, err := parseObject(existing)
	if err != nil {
		return nil, fmt.Errorf("existing daemon.json: %w", err)
	}
	for _, m := range have.members {
		if why, bad := refusedKeys[m.key]; bad {
			l, c := lineCol(existing, m.keyStart)
			return nil, fmt.Errorf("existing daemon.json: line %d col %d: it sets %q: %s", l, c, m.key, why)
		}
	}
	if len(have.members) == 0 {
		s := make([]Setting, len(want.members))
		for i, m := range want.members {
			s[i] = Setting{m.key, want.value(m)}
		}
		return formatObject(s), nil
	}
	var out bytes.Buffer
	out.Grow(len(existing) + len(ours))
	src := have.src
	at := 0
	for _, m := range have.members {
		w, ok := want.find(m.key)
		if !ok || jsonEqual(have.value(m), want.value(w)) {
			continue
		}
		out.Write(src[at:m.valueStart])
		out.Write(want.value(w))
		at = m.valueEnd
	}
	last := have.members[len(have.members)-1]
	out.Write(src[at:last.valueEnd])
	sep := memberSeparator(have)
	for _, w := range want.members {
		if _, ok := have.find(w.key); ok {
			continue
		}
		out.WriteString(sep)
		out.Write(jsonString(w.key))
		out.WriteString(": ")
		out.Write(want.value(w))
	}
	out.Write(src[last.valueEnd:])
	return out.Bytes(), nil
}

// memberSeparator is what goes before an appended member: a comma and the
// whitespace the file puts before its first key ("\n    " in a file indented
// with four spaces, "" in a one-line file).
func memberSeparator(o *object) string {
	lead := o.src[o.open+1 : o.members[0].keyStart]
	if i := bytes.LastIndexByte(lead, '\n'); i >= 0 {
		return ",\n" + string(lead[i+1:])
	}
	return "," + string(lead)
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Validate checks a daemon.json before it is installed, with the rules dockerd
// applies only at start or not at all (docs/rules.md#what-dockerd-accepts, §1.6): strict
// JSON object without duplicate keys; no "bridge" or "hosts"; "bip" a host
// address with a prefix of at most /30; "fixed-cidr" a network inside bip's;
// "mtu" an integer 68–9216; "dns" an array of IP addresses;
// "allow-direct-routing" a boolean; a "default-runtime" other than runc named
// in "runtimes". It returns every problem found, joined.
func Validate(data []byte) error {
	o, err := parseObject(data)
	if err != nil {
		return err
	}
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%q: %s", key, fmt.Sprintf(format, args...)))
	}
	var bip netip.Prefix
	if m, ok := o.find("bip"); ok {
		var s string
		if json.Unmarshal(o.value(m), &s) != nil {
			bad("bip", "must be a string like \"172.16.41.1/24\"")
		} else if p, err := netip.ParsePrefix(s); err != nil || !p.Addr().Is4() {
			bad("bip", "%q is not an IPv4 address with a prefix length, like 172.16.41.1/24", s)
		} else if p.Bits() > 30 {
			bad("bip", "%s leaves no address for containers (at most /30)", s)
		} else if p.Addr() == p.Masked().Addr() || p.Addr() == broadcast(p) {
			bad("bip", "%s is the network or broadcast address of %s; docker0 needs a host address (dockerd: \"failed to allocate gateway\")", p.Addr(), p.Masked())
		} else {
			bip = p
		}
	}
	if m, ok := o.find("fixed-cidr"); ok {
		var s string
		if json.Unmarshal(o.value(m), &s) != nil {
			bad("fixed-cidr", "must be a string like \"172.16.41.0/24\"")
		} else if p, err := netip.ParsePrefix(s); err != nil || !p.Addr().Is4() {
			bad("fixed-cidr", "%q is not an IPv4 network like 172.16.41.0/24", s)
		} else if p.Masked() != p {
			bad("fixed-cidr", "%s has host bits set; the network is %s", s, p.Masked())
		} else if bip.IsValid() && (p.Bits() < bip.Bits() || !bip.Masked().Contains(p.Addr())) {
			bad("fixed-cidr", "%s is not inside bip's network %s (dockerd would ignore it silently)", s, bip.Masked())
		}
	}
	if m, ok := o.find("mtu"); ok {
		var n int
		if err := json.Unmarshal(o.value(m), &n); err != nil {
			bad("mtu", "must be an integer number of bytes, not %s", o.value(m))
		} else if n < 68 || n > 9216 {
			bad("mtu", "%d is outside 68–9216", n)
		}
	}
	if m, ok := o.find("dns"); ok {
		var list []string
		if err := json.Unmarshal(o.value(m), &list); err != nil {
			bad("dns", "must be an array of IP addresses, not %s", o.value(m))
		}
		for _, s := range list {
			if _, err := netip.ParseAddr(s); err != nil {
				bad("dns", "%q is not an IP address", s)
			}
		}
	}
	if m, ok := o.find("allow-direct-routing"); ok {
		var v bool
		if json.Unmarshal(o.value(m), &v) != nil {
			bad("allow-direct-routing", "must be true or false, not %s", o.value(m))
		}
	}
	for _, m := range o.members {
		if why, refused := refusedKeys[m.key]; refused {
			bad(m.key, "%s", why)
		}
	}
	if m, ok := o.find("default-runtime"); ok {
		var name string
		if json.Unmarshal(o.value(m), &name) != nil {
			bad("default-runtime", "must be a string")
		} else if name != "runc" && name != "" {
			var runtimes map[string]json.RawMessage
			if r, ok := o.find("runtimes"); ok {
				_ = json.Unmarshal(o.value(r), &runtimes)
			}
			if _, ok := runtimes[name]; !ok {
				bad("default-runtime", "%q is not in \"runtimes\" (dockerd: \"specified default runtime '%s' does not exist\")", name, name)
			}
		}
	}
	return errors.Join(errs...)
}

func broadcast(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= 1<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// ChangedKeys lists the top-level keys whose value differs between two
// daemon.json files (added, removed or changed), in the order of after then
// before; for plans. Both must parse.
func ChangedKeys(before, after []byte) []string {
	a, err1 := parseObject(before)
	b, err2 := parseObject(after)
	if err1 != nil || err2 != nil {
		return nil
	}
	var out []string
	for _, m := range b.members {
		if o, ok := a.find(m.key); !ok || !jsonEqual(a.value(o), b.value(m)) {
			out = append(out, m.key)
		}
	}
	for _, m := range a.members {
		if _, ok := b.find(m.key); !ok {
			out = append(out, m.key)
		}
	}
	return out
}

// Keys lists the top-level keys of a daemon.json in file order (nil when it
// does not parse).
func Keys(data []byte) []string {
	o, err := parseObject(data)
	if err != nil {
		return nil
	}
	keys := make([]string, len(o.members))
	for i, m := range o.members {
		keys[i] = m.key
	}
	return keys
}
