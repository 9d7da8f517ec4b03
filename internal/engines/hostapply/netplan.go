package hostapply

import (
	"path"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/railnet"
)

// Netplan reads every YAML file of /lib/netplan, /etc/netplan and /run/netplan
// as one configuration: files are taken in the order of their names, a later
// file amends or overrides an earlier one, and a file in /run hides one of the
// same name in /etc, which hides one in /lib (netplan-generate(8), "Handling
// multiple files"). A definition's ID is its key under `ethernets:`; with
// `match:` the ID is only a name, otherwise it is the interface's name
// (netplan's doc/structure-id.md). Two IDs that match one NIC give two
// definitions, of which systemd-networkd uses only the first file that
// matches: rdggen therefore writes the data interface's routes and MTU under
// the ID that already configures it.

// netplanDirs are searched in this order; a later directory's file of the
// same name hides an earlier one's.
var netplanDirs = []string{"/lib/netplan", "/etc/netplan", "/run/netplan"}

// netplanFile is one of the host's netplan files as the probe read it.
type netplanFile struct {
	Path string
	Data []byte
}

// rdggenNetplan are rdggen's own netplan files, which never count as the
// host's: pkg/dockernet's routes and MTU of the data interface, and
// pkg/railnet's rails (whose definitions use the IDs found in the others).
var rdggenNetplan = []string{dockernet.NetplanPath, railnet.NetplanPath}

// netplanOrder is the host's own netplan files as netplan reads them: in
// the order of their names, a file in a later directory hiding one of the
// same name in an earlier one; rdggen's own files left out.
func netplanOrder(files []netplanFile) []netplanFile {
	byName := map[string]netplanFile{}
	for _, dir := range netplanDirs {
		for _, f := range files {
			if path.Dir(f.Path) == dir && strings.HasSuffix(f.Path, ".yaml") && !slices.Contains(rdggenNetplan, f.Path) {
				byName[path.Base(f.Path)] = f // a later directory hides an earlier one
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]netplanFile, 0, len(names))
	for _, n := range names {
		out = append(out, byName[n])
	}
	return out
}

// netplanID returns the netplan ID whose definition configures iface (its
// MAC address is mac, "" when unknown) and how it was found, e.g.
// "match.name in /etc/netplan/50-cloud-init.yaml"; ok is false when no
// definition does. rdggen's own files do not count (rdggenNetplan): each
// defines the interface under the ID found here, or its name when none is,
// and counting it would find that ID the next time, in rdggen's file.
func netplanID(files []netplanFile, iface, mac string) (id, how string, ok bool) {
	for _, f := range netplanOrder(files) {
		var doc struct {
			Network struct {
				Ethernets map[string]struct {
					Match struct {
						Name       string `yaml:"name"`
						MACAddress string `yaml:"macaddress"`
					} `yaml:"match"`
					SetName string `yaml:"set-name"`
				} `yaml:"ethernets"`
			} `yaml:"network"`
		}
		if yaml.Unmarshal(f.Data, &doc) != nil {
			continue // netplan itself reports a broken file
		}
		ids := make([]string, 0, len(doc.Network.Ethernets))
		for k := range doc.Network.Ethernets {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		for _, k := range ids {
			e := doc.Network.Ethernets[k]
			m := e.Match
			switch {
			case m.Name == "" && m.MACAddress == "" && k == iface:
				return k, "its key in " + f.Path, true
			case e.SetName == iface:
				return k, "set-name in " + f.Path, true
			case m.Name != "" && globMatch(m.Name, iface):
				return k, "match.name in " + f.Path, true
			case m.MACAddress != "" && mac != "" && strings.EqualFold(m.MACAddress, mac):
				return k, "match.macaddress in " + f.Path, true
			}
		}
	}
	return "", "", false
}

// globMatch is netplan's match.name: a shell glob ("en*").
func globMatch(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}
