package nvuesim

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The part of the NVUE schema the simulator checks: every object rdggen
// writes is modelled key by key, and a key or value the simulator does not
// know under one of them is refused with a 400, as NVUE's schema
// validation refuses an unknown property ("Additional properties are not
// allowed"), so that a renamed or misspelt path fails the test that sends
// it. The top-level objects rdggen never writes (acl, evpn, mlag, nve,
// platform) are not modelled and pass as they are. Sources, per path: the
// NVUE command reference's "Set and Unset Commands"
// (https://docs.nvidia.com/networking-ethernet-software/nvue-reference/:
// Interface, BGP, BFD, Static Routing, QoS, LLDP, System), the Cumulus
// Linux user guide's RoCE page (`qos roce`), "Switch Port Attributes"
// (the MTU range, breakout ports) and "Bidirectional Forwarding Detection"
// (the neighbor's BFD before 5.15). docs/nvue.md has the table.

// rootKeys are the top-level objects of the NVUE configuration.
var rootKeys = map[string]bool{
	"acl": true, "bridge": true, "evpn": true, "interface": true, "mlag": true, "nve": true,
	"platform": true, "qos": true, "router": true, "service": true, "system": true, "vrf": true,
}

// opaque are the top-level objects the simulator does not model.
var opaque = map[string]bool{"acl": true, "evpn": true, "mlag": true, "nve": true, "platform": true}

// roceModes are the values of `nv set qos roce mode` (lossless, lossy; the
// newer lossless-single-ipool and lossy-multi-tc of later releases are
// accepted whatever the version: docs/nvue.md).
var roceModes = map[string]bool{"lossless": true, "lossy": true, "lossless-single-ipool": true, "lossy-multi-tc": true}

var (
	ifaceName = regexp.MustCompile(`^(swp[1-9][0-9]*(s[0-7])?|eth[0-9]+|lo|vlan[1-9][0-9]*|bond[0-9]+|br_default|peerlink(\.[0-9]+)?)$`)
	hostname  = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	swpNumber = regexp.MustCompile(`^swp([0-9]+)`)
	swpLane   = regexp.MustCompile(`^swp([0-9]+)s([0-9]+)$`)
	vrfName   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,14}$`)
	modeName  = regexp.MustCompile(`^([1248])x$`)
)

// node is one object or leaf of the modelled schema.
type node struct {
	// keys are an object's fixed properties; each returns its node for
	// the simulated release (nil: the release has no such property, with
	// why, for the error).
	keys map[string]func(o Options) (*node, string)
	// items is a keyed collection's member node (interface names,
	// prefixes, neighbors), name the check of a member's key.
	items *node
	name  func(string) error
	// leaf checks a value.
	leaf func(v any) error
	// set: the object only exists (an empty object, `nv set … up`).
	set bool
	// opaque: anything goes below.
	opaque bool
}

func always(n *node) func(Options) (*node, string) {
	return func(Options) (*node, string) { return n, "" }
}

// before and since gate a property on the release: before 5.15's renames
// and from them ("New and Changed NVUE Commands", 5.15).
func before515(n *node, instead string) func(Options) (*node, string) {
	return func(o Options) (*node, string) {
		if renamed(o) {
			return nil, fmt.Sprintf("Cumulus Linux %s names it %s", o.Version, instead)
		}
		return n, ""
	}
}

func since515(n *node, instead string) func(Options) (*node, string) {
	return func(o Options) (*node, string) {
		if !renamed(o) {
			return nil, fmt.Sprintf("Cumulus Linux %s names it %s", o.Version, instead)
		}
		return n, ""
	}
}

func obj(keys map[string]func(Options) (*node, string)) *node { return &node{keys: keys} }

func collection(name func(string) error, items *node) *node { return &node{name: name, items: items} }

var setNode = &node{set: true}

func enum(what string, values ...string) *node {
	return &node{leaf: func(v any) error {
		s, ok := v.(string)
		for _, x := range values {
			if ok && s == x {
				return nil
			}
		}
		return fmt.Errorf("%s is not one of %s", compact(v), strings.Join(values, ", "))
	}}
}

func intIn(lo, hi int64) *node {
	return &node{leaf: func(v any) error {
		if i, ok := v.(int64); ok && i >= lo && i <= hi {
			return nil
		}
		return fmt.Errorf("%s is not an integer in %d-%d", compact(v), lo, hi)
	}}
}

func text(max int) *node {
	return &node{leaf: func(v any) error {
		s, ok := v.(string)
		if !ok || len(s) > max || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("%s is not a string of at most %d printable characters", compact(v), max)
		}
		return nil
	}}
}

var ipv4Leaf = &node{leaf: func(v any) error {
	s, _ := v.(string)
	if a, err := netip.ParseAddr(s); err != nil || !a.Is4() {
		return fmt.Errorf("%s is not an IPv4 address", compact(v))
	}
	return nil
}}

func prefixKey(s string) error {
	if _, err := netip.ParsePrefix(s); err != nil {
		return fmt.Errorf("%q is not a prefix", s)
	}
	return nil
}

// onOff is an `enable` property: on or off (Cumulus Linux 5.0–5.14).
var onOff = enum("enable", "on", "off")

// enabled is a `state` property: enabled or disabled (5.15's form).
var enabled = enum("state", "enabled", "disabled")

// enableKeys are an object's on/off switch in both releases' forms.
func enableKeys(keys map[string]func(Options) (*node, string)) map[string]func(Options) (*node, string) {
	keys["enable"] = before515(onOff, "state enabled|disabled")
	keys["state"] = since515(enabled, "enable on|off")
	return keys
}

// The modelled schema.
var (
	addresses = collection(prefixKey, setNode)
	ipNode    = obj(map[string]func(Options) (*node, string){"address": always(addresses), "vrf": always(text(15))})

	breakoutNode = collection(func(s string) error {
		if s == "disabled" || s == "loopback" || modeName.MatchString(s) {
			return nil
		}
		return fmt.Errorf("%q is not a breakout mode (1x, 2x, 4x, 8x, disabled, loopback)", s)
	}, obj(map[string]func(Options) (*node, string){"lanes-per-port": always(intIn(1, 8))}))

	linkNode = obj(map[string]func(Options) (*node, string){
		"mtu": always(intIn(552, 9216)),
		"state": always(collection(func(s string) error {
			if s != "up" && s != "down" {
				return fmt.Errorf("%q is not one of up, down", s)
			}
			return nil
		}, setNode)),
		"breakout": always(breakoutNode),
	})

	bridgePort = obj(map[string]func(Options) (*node, string){
		"domain": always(collection(bridgeName, obj(map[string]func(Options) (*node, string){"access": always(intIn(1, 4094))}))),
	})

	ifaceNode = obj(map[string]func(Options) (*node, string){
		"type":        always(enum("type", "swp", "svi", "loopback", "bond", "eth", "sub")),
		"description": always(text(255)),
		"link":        always(linkNode),
		"bridge":      always(bridgePort),
		"ip":          before515(ipNode, "ipv4 address"),
		"ipv4":        since515(ipNode, "ip address"),
		"vlan":        always(intIn(1, 4094)),
	})

	neighborBFD = obj(map[string]func(Options) (*node, string){
		"enable":            before515(onOff, "BFD profiles: nv set router bfd profile <name>"),
		"detect-multiplier": always(intIn(2, 255)),
		"min-rx-interval":   always(intIn(50, 60000)),
		"min-tx-interval":   always(intIn(50, 60000)),
	})

	neighborNode = obj(enableKeys(map[string]func(Options) (*node, string){
		"remote-as": always(&node{leaf: func(v any) error {
			switch x := v.(type) {
			case string:
				if x == "external" || x == "internal" {
					return nil
				}
			case int64:
				if x >= 1 && x <= 4294967294 {
					return nil
				}
			}
			return fmt.Errorf("%s is not an AS number (1-4294967294), external or internal", compact(v))
		}}),
		"type":        always(enum("type", "unnumbered", "numbered")),
		"bfd":         always(neighborBFD),
		"description": always(text(255)),
	}))

	redistribute = obj(map[string]func(Options) (*node, string){
		"connected": always(obj(enableKeys(map[string]func(Options) (*node, string){}))),
		"static":    always(obj(enableKeys(map[string]func(Options) (*node, string){}))),
	})

	vrfBGP = obj(enableKeys(map[string]func(Options) (*node, string){
		"neighbor": always(collection(neighborKey, neighborNode)),
		"address-family": always(obj(map[string]func(Options) (*node, string){
			"ipv4-unicast": always(obj(enableKeys(map[string]func(Options) (*node, string){
				"network":      always(collection(prefixKey, setNode)),
				"redistribute": always(redistribute),
			}))),
		})),
		"path-selection": always(obj(map[string]func(Options) (*node, string){
			"multipath": always(obj(map[string]func(Options) (*node, string){"aspath-ignore": always(onOff)})),
		})),
	}))

	staticRoute = obj(map[string]func(Options) (*node, string){
		"address-family": always(enum("address-family", "ipv4-unicast")),
		"via": always(collection(func(s string) error {
			if _, err := netip.ParseAddr(s); err != nil && !ifaceName.MatchString(s) && s != "blackhole" {
				return fmt.Errorf("%q is not an address, an interface or blackhole", s)
			}
			return nil
		}, obj(map[string]func(Options) (*node, string){"type": always(enum("type", "ipv4-address", "interface", "blackhole"))}))),
	})

	schema = obj(map[string]func(Options) (*node, string){
		"interface": always(collection(func(s string) error {
			if !ifaceName.MatchString(s) {
				return fmt.Errorf("interface: %q is not a valid interface name", s)
			}
			return nil
		}, ifaceNode)),
		"router": always(obj(map[string]func(Options) (*node, string){
			"bgp": always(obj(enableKeys(map[string]func(Options) (*node, string){
				"autonomous-system": always(intIn(1, 4294967294)),
				"router-id":         always(ipv4Leaf),
			}))),
		})),
		"vrf": always(collection(func(s string) error {
			if !vrfName.MatchString(s) {
				return fmt.Errorf("%q is not a VRF name", s)
			}
			return nil
		}, obj(map[string]func(Options) (*node, string){
			"router": always(obj(map[string]func(Options) (*node, string){
				"bgp":    always(vrfBGP),
				"static": always(collection(prefixKey, staticRoute)),
			})),
		}))),
		"qos": always(obj(map[string]func(Options) (*node, string){
			"roce": always(obj(map[string]func(Options) (*node, string){
				"enable": before515(onOff, "qos roce state enabled|disabled"),
				"state":  since515(enabled, "qos roce enable on|off"),
				"mode":   always(&node{leaf: roceMode}),
			})),
		})),
		"service": always(obj(map[string]func(Options) (*node, string){
			"lldp": before515(obj(map[string]func(Options) (*node, string){}), "system lldp"),
		})),
		"system": always(obj(map[string]func(Options) (*node, string){
			"hostname": always(&node{leaf: func(v any) error {
				if s, ok := v.(string); !ok || !hostname.MatchString(s) {
					return fmt.Errorf("%s is not a host name", compact(v))
				}
				return nil
			}}),
			"lldp": since515(obj(map[string]func(Options) (*node, string){}), "service lldp"),
			"config": always(obj(map[string]func(Options) (*node, string){
				"auto-save": always(obj(enableKeys(map[string]func(Options) (*node, string){}))),
			})),
		})),
		"bridge": always(obj(map[string]func(Options) (*node, string){
			"domain": always(collection(bridgeName, obj(map[string]func(Options) (*node, string){
				"vlan": always(collection(func(s string) error {
					if n, err := strconv.Atoi(s); err != nil || n < 1 || n > 4094 {
						return fmt.Errorf("%q is not a VLAN", s)
					}
					return nil
				}, setNode)),
			}))),
		})),
	})
)

var reBridge = regexp.MustCompile(`^br_[A-Za-z0-9_]{1,12}$`)

func bridgeName(s string) error {
	if !reBridge.MatchString(s) {
		return fmt.Errorf("%q is not a bridge name", s)
	}
	return nil
}

// neighborKey is a BGP neighbor's id: an address or an interface.
func neighborKey(s string) error {
	if _, err := netip.ParseAddr(s); err == nil || ifaceName.MatchString(s) {
		return nil
	}
	return fmt.Errorf("%q is not an address or an interface", s)
}

func roceMode(v any) error {
	if s, ok := v.(string); ok && roceModes[s] {
		return nil
	}
	return fmt.Errorf("%s is not one of lossless, lossy, lossless-single-ipool, lossy-multi-tc", compact(v))
}

// checkPatch checks a PATCH body landing at path, as the API does before
// it takes it into the revision (a 400 otherwise): the path itself down
// the schema, then every key and value of the body.
func checkPatch(path []string, body any, o Options) error {
	if _, isList := body.([]any); isList {
		return fmt.Errorf("%s: %s is not of type 'object', 'string', 'integer' or 'boolean'", where(path), compact(body))
	}
	if len(path) == 0 {
		m, ok := body.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not of type 'object'", compact(body))
		}
		for _, k := range sortedKeys(m) {
			if !rootKeys[k] {
				//lint:ignore ST1005 the text NVUE's schema validation answers with
				return fmt.Errorf("Additional properties are not allowed ('%s' was unexpected)", k)
			}
		}
	} else if !rootKeys[path[0]] {
		//lint:ignore ST1005 the text NVUE's schema validation answers with
		return fmt.Errorf("Additional properties are not allowed ('%s' was unexpected)", path[0])
	}
	n := schema
	for i, k := range path {
		if i == 0 && opaque[k] {
			return nil
		}
		next, err := n.child(path[:i], k, o)
		if err != nil {
			return err
		}
		n = next
	}
	return n.check(path, body, o)
}

// child is n's node for key k at path.
func (n *node) child(path []string, k string, o Options) (*node, error) {
	switch {
	case n.opaque:
		return n, nil
	case n.items != nil:
		if err := n.name(k); err != nil {
			if len(path) > 0 && path[0] == "interface" && len(path) == 1 {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %v", where(path), err)
		}
		return n.items, nil
	case n.keys != nil:
		f, ok := n.keys[k]
		if !ok {
			return nil, fmt.Errorf("%s: Additional properties are not allowed ('%s' was unexpected)", where(path), k)
		}
		c, why := f(o)
		if c == nil {
			return nil, fmt.Errorf("%s: Additional properties are not allowed ('%s' was unexpected): %s", where(path), k, why)
		}
		return c, nil
	}
	return nil, fmt.Errorf("%s: %q: a value has no properties", where(path), k)
}

// check checks value v at path against n; null unsets and is always
// taken.
func (n *node) check(path []string, v any, o Options) error {
	if v == nil || n.opaque {
		return nil
	}
	if _, isList := v.([]any); isList {
		return fmt.Errorf("%s: %s is not of type 'object', 'string', 'integer' or 'boolean'", where(path), compact(v))
	}
	if n.leaf != nil {
		if err := n.leaf(v); err != nil {
			return fmt.Errorf("%s: %v", where(path), err)
		}
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: %s is not of type 'object'", where(path), compact(v))
	}
	if n.set {
		if len(m) > 0 {
			return fmt.Errorf("%s: Additional properties are not allowed ('%s' was unexpected)", where(path), sortedKeys(m)[0])
		}
		return nil
	}
	for _, k := range sortedKeys(m) {
		c, err := n.child(path, k, o)
		if err != nil {
			return err
		}
		if err := c.check(append(append([]string(nil), path...), k), m[k], o); err != nil {
			return err
		}
	}
	return nil
}

func where(path []string) string { return strings.Join(path, ".") }

// renamed reports whether the simulated release has the NVUE names of
// Cumulus Linux 5.15 ("New and Changed NVUE Commands"): qos roce state for
// qos roce enable, interface <id> ipv4 address for ip address, system lldp
// for service lldp. The simulator refuses the old names there, so that a
// client still sending them is caught (whether a real 5.15 still takes
// them is not documented: docs/nvue.md).
func renamed(o Options) bool { return versionAtLeast(o.Version, 5, 15) }

// validate checks a whole configuration before it is applied, as `nv
// config apply` does: ports that exist on the switch, and split ports:
// a lane swpNsM exists only while swpN is broken out into more than M
// ports, in a mode the switch model's ports take, with one mode a port
// (NVIDIA Cumulus Linux user guide, "Switch Port Attributes", breakout
// ports: the parent splits into swpNs0…). A mode that takes the next
// port (an SN2700's 4x, an SN5600's 8x: "disable the subsequent
// even-numbered port") splits an odd port only, and the even port after
// it takes no configuration but `link breakout disabled` (NVUE disables
// it by itself; that it refuses anything else there, and these texts,
// are [INF]).
func validate(t Tree, o Options) error {
	ifaces, _ := t["interface"].(map[string]any)
	for _, name := range sortedKeys(ifaces) {
		if m := swpNumber.FindStringSubmatch(name); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > o.Ports {
				//lint:ignore ST1005 the text NVUE answers with
				return fmt.Errorf("Invalid config [interface %s]: the switch has swp1-swp%d", name, o.Ports)
			}
		}
		modes, _ := at(ifaces, name, "link", "breakout").(map[string]any)
		if len(modes) > 1 {
			//lint:ignore ST1005 the text NVUE answers with
			return fmt.Errorf("Invalid config [interface %s]: more than one breakout mode (%s)", name, strings.Join(sortedKeys(modes), ", "))
		}
		for mode := range modes {
			if m := modeName.FindStringSubmatch(mode); m != nil {
				n, _ := strconv.Atoi(m[1])
				if n > 1 && !o.breakouts()[n] {
					//lint:ignore ST1005 the text NVUE answers with
					return fmt.Errorf("Invalid config [interface %s]: breakout %s is not supported on this platform (%s)", name, mode, o.platform())
				}
				if err := o.blocking(ifaces, name, n); err != nil {
					return err
				}
			}
		}
	}
	for _, name := range sortedKeys(ifaces) {
		m := swpLane.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		parent := "swp" + m[1]
		lane, _ := strconv.Atoi(m[2])
		modes, _ := at(ifaces, parent, "link", "breakout").(map[string]any)
		ways := 0
		for mode := range modes {
			if mm := modeName.FindStringSubmatch(mode); mm != nil {
				ways, _ = strconv.Atoi(mm[1])
			}
		}
		switch {
		case ways < 2:
			//lint:ignore ST1005 the text NVUE answers with
			return fmt.Errorf("Invalid config [interface %s]: no such interface: %s is not broken out (nv set interface %s link breakout …)", name, parent, parent)
		case lane >= ways:
			//lint:ignore ST1005 the text NVUE answers with
			return fmt.Errorf("Invalid config [interface %s]: no such interface: %s is broken out into %d ports (%ss0-%ss%d)", name, parent, ways, parent, parent, ways-1)
		}
	}
	return nil
}

// blocking checks port name, broken out ways ways: where the model's
// split of that many ways takes the next port, name is odd-numbered and
// the next port (and its lanes) carries nothing but `link breakout
// disabled`.
func (o Options) blocking(ifaces map[string]any, name string, ways int) error {
	m := swpNumber.FindStringSubmatch(name)
	if m == nil || !o.model().Blocks(ways) {
		return nil
	}
	n, _ := strconv.Atoi(m[1])
	if n%2 == 0 {
		//lint:ignore ST1005 the text NVUE answers with
		return fmt.Errorf("Invalid config [interface %s]: breakout %dx is supported on odd-numbered ports only on this platform (%s): it disables the next port", name, ways, o.platform())
	}
	next := "swp" + strconv.Itoa(n+1)
	for _, other := range sortedKeys(ifaces) {
		if other != next && !strings.HasPrefix(other, next+"s") {
			continue
		}
		if v, _ := ifaces[other].(map[string]any); other == next && len(v) == 1 && fmt.Sprint(at(v, "link")) == "map[breakout:map[disabled:map[]]]" {
			continue
		}
		//lint:ignore ST1005 the text NVUE answers with
		return fmt.Errorf("Invalid config [interface %s]: %s is disabled by the %dx breakout of %s (nv set interface %s link breakout disabled)", other, next, ways, name, next)
	}
	return nil
}

// model is the simulated model as pkg/inventory knows it, running
// Cumulus Linux.
func (o Options) model() inventory.Switch {
	return inventory.Switch{Model: strings.ToUpper(o.Model), Cumulus: inventory.MustVersion("5.0.0")}
}

// breakouts are the breakout modes of the simulated model's ports: the
// inventory's table for Options.Model, else 2x and 4x (the four SerDes
// lanes of a QSFP port, most Spectrum models).
func (o Options) breakouts() map[int]bool {
	modes := []int{2, 4}
	if o.Model != "" {
		modes = o.model().BreakoutModes()
	}
	m := map[int]bool{}
	for _, x := range modes {
		m[x] = true
	}
	return m
}

func (o Options) platform() string {
	if o.Model == "" {
		return "ports of 4 lanes"
	}
	return o.Model
}

func at(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
