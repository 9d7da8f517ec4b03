package nvuesim

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// The part of the NVUE schema the simulator checks (NVUE's OpenAPI schema
// has far more; what it does not model it accepts below a known top-level
// object). Sources: the NVUE command reference for each command
// (https://docs.nvidia.com/networking-ethernet-software/nvue-reference/),
// the RoCE page of the Cumulus Linux user guide for `qos roce`, the switch
// port attributes page for the MTU range. docs/nvue.md has the table.

// rootKeys are the top-level objects of the NVUE configuration.
var rootKeys = map[string]bool{
	"acl": true, "bridge": true, "evpn": true, "interface": true, "mlag": true, "nve": true,
	"platform": true, "qos": true, "router": true, "service": true, "system": true, "vrf": true,
}

// roceModes are the values of `nv set qos roce mode` (lossless, lossy; the
// newer lossless-single-ipool and lossy-multi-tc of later releases are
// accepted whatever the version: docs/nvue.md).
var roceModes = map[string]bool{"lossless": true, "lossy": true, "lossless-single-ipool": true, "lossy-multi-tc": true}

var (
	ifaceName = regexp.MustCompile(`^(swp[1-9][0-9]*(s[0-3])?|eth[0-9]+|lo|vlan[1-9][0-9]*|bond[0-9]+|br_default|peerlink(\.[0-9]+)?)$`)
	hostname  = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	swpNumber = regexp.MustCompile(`^swp([0-9]+)`)
)

// checkPatch checks a PATCH body landing at path, as the API does before
// it takes it into the revision (a 400 otherwise).
func checkPatch(path []string, body any, o Options) error {
	return walk(path, body, o)
}

func walk(path []string, v any, o Options) error {
	if err := checkNode(path, v, o); err != nil {
		return err
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range sortedKeys(m) {
			if err := walk(append(append([]string(nil), path...), k), m[k], o); err != nil {
				return err
			}
		}
	}
	return nil
}

func where(path []string) string { return strings.Join(path, ".") }

// checkNode checks the value at one path.
func checkNode(path []string, v any, o Options) error {
	if _, isList := v.([]any); isList {
		return fmt.Errorf("%s: %s is not of type 'object', 'string', 'integer' or 'boolean'", where(path), compact(v))
	}
	if v == nil {
		return nil // null unsets
	}
	n := len(path)
	switch {
	case n == 1:
		if !rootKeys[path[0]] {
			//lint:ignore ST1005 the text NVUE's schema validation answers with
			return fmt.Errorf("Additional properties are not allowed ('%s' was unexpected)", path[0])
		}
		return object(path, v)
	case n == 2 && path[0] == "interface":
		if !ifaceName.MatchString(path[1]) {
			return fmt.Errorf("interface: %q is not a valid interface name", path[1])
		}
		return object(path, v)
	case n == 4 && path[0] == "interface" && path[2] == "link" && path[3] == "mtu":
		i, ok := v.(int64)
		if !ok || i < 552 || i > 9216 {
			return fmt.Errorf("%s: %s is not an integer in 552-9216", where(path), compact(v))
		}
	case n == 4 && path[0] == "interface" && path[2] == "link" && path[3] == "state":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s is not of type 'object'", where(path), compact(v))
		}
		for k := range m {
			if k != "up" && k != "down" {
				return fmt.Errorf("%s: %q is not one of up, down", where(path), k)
			}
		}
	case n == 5 && path[0] == "interface" && (path[2] == "ip" || path[2] == "ipv4") && path[3] == "address":
		if _, err := netip.ParsePrefix(path[4]); err != nil {
			return fmt.Errorf("%s: %q is not an address with a prefix length", where(path[:4]), path[4])
		}
		return object(path, v)
	case n == 3 && path[0] == "qos" && path[1] == "roce" && path[2] == "mode":
		if s, ok := v.(string); !ok || !roceModes[s] {
			return fmt.Errorf("qos.roce.mode: %s is not one of lossless, lossy, lossless-single-ipool, lossy-multi-tc", compact(v))
		}
	case n == 3 && path[0] == "qos" && path[1] == "roce" && path[2] == "enable":
		if renamed(o) {
			return fmt.Errorf("qos.roce.enable: Additional properties are not allowed ('enable' was unexpected): Cumulus Linux %s names it qos roce state enabled|disabled", o.Version)
		}
		if s, ok := v.(string); !ok || s != "on" && s != "off" {
			return fmt.Errorf("qos.roce.enable: %s is not one of on, off", compact(v))
		}
	case n == 3 && path[0] == "qos" && path[1] == "roce" && path[2] == "state":
		if !renamed(o) {
			return fmt.Errorf("qos.roce.state: Additional properties are not allowed ('state' was unexpected): Cumulus Linux %s names it qos roce enable on|off", o.Version)
		}
		if s, ok := v.(string); !ok || s != "enabled" && s != "disabled" {
			return fmt.Errorf("qos.roce.state: %s is not one of enabled, disabled", compact(v))
		}
	case n == 3 && path[0] == "interface" && (path[2] == "ip" && renamed(o) || path[2] == "ipv4" && !renamed(o)):
		if m, ok := v.(map[string]any); ok {
			if _, has := m["address"]; has {
				want := "ipv4"
				if !renamed(o) {
					want = "ip"
				}
				return fmt.Errorf("%s.address: Additional properties are not allowed ('address' was unexpected): Cumulus Linux %s has interface addresses under %s", where(path), o.Version, want)
			}
		}
	case n == 2 && path[0] == "system" && path[1] == "hostname":
		if s, ok := v.(string); !ok || !hostname.MatchString(s) {
			return fmt.Errorf("system.hostname: %s is not a host name", compact(v))
		}
	case n == 5 && path[0] == "vrf" && path[2] == "router" && path[3] == "static":
		if _, err := netip.ParsePrefix(path[4]); err != nil {
			return fmt.Errorf("%s: %q is not a prefix", where(path[:4]), path[4])
		}
		return object(path, v)
	case n == 7 && path[0] == "vrf" && path[2] == "router" && path[3] == "static" && path[5] == "via":
		if _, err := netip.ParseAddr(path[6]); err != nil && !ifaceName.MatchString(path[6]) && path[6] != "blackhole" {
			return fmt.Errorf("%s: %q is not an address, an interface or blackhole", where(path[:6]), path[6])
		}
		return object(path, v)
	}
	return nil
}

// renamed reports whether the simulated release has the NVUE names of
// Cumulus Linux 5.15 ("New and Changed NVUE Commands"): qos roce state for
// qos roce enable, interface <id> ipv4 address for ip address. The
// simulator refuses the old names there, so that a client still sending
// them is caught (whether a real 5.15 still takes them is not documented:
// docs/nvue.md).
func renamed(o Options) bool { return versionAtLeast(o.Version, 5, 15) }

func object(path []string, v any) error {
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("%s: %s is not of type 'object'", where(path), compact(v))
	}
	return nil
}

// validate checks a whole configuration before it is applied, as `nv
// config apply` does: ports that exist on the switch.
func validate(t Tree, o Options) error {
	ifaces, _ := t["interface"].(map[string]any)
	for _, name := range sortedKeys(ifaces) {
		if m := swpNumber.FindStringSubmatch(name); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > o.Ports {
				//lint:ignore ST1005 the text NVUE answers with
				return fmt.Errorf("Invalid config [interface %s]: the switch has swp1-swp%d", name, o.Ports)
			}
		}
	}
	return nil
}
