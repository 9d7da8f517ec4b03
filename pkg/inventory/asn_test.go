package inventory

import (
	"os"
	"strings"
	"testing"
)

// 4-byte ASNs where an ONYX switch would write them (its own, a peer's)
// are refused at the key they come from, since no public source says ONYX
// takes them; between Cumulus switches they stay valid.
func TestONYXFourByteASN(t *testing.T) {
	src, err := os.ReadFile("testdata/fit/onyx-4byte-asn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load("mix4.yaml", src)
	want := "mix4.yaml:10:13: fabric.leaf_asn: ASN 4200000001 of leaf1 is a 4-byte AS number (above 65535, RFC 6793), and spine2 runs ONYX 3.6.8190 and peers with leaf1: no public source says ONYX takes one in `router bgp` or `neighbor … remote-as`, so rdggen does not write it; use 2-byte private ASNs, 64512–65534 (RFC 6996)\n" +
		"mix4.yaml:11:14: fabric.spine_asn: ASN 4200000000 of spine2 is a 4-byte AS number (above 65535, RFC 6793), and spine2 runs ONYX 3.6.8190: no public source says ONYX takes one in `router bgp` or `neighbor … remote-as`, so rdggen does not write it; use 2-byte private ASNs, 64512–65534 (RFC 6996)"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	// onyx makes fabricYAML's leaf2 an ONYX switch (its ports spelled
	// 1/N) with the extra keys given.
	onyx := func(version, extra string) string {
		r := strings.NewReplacer(
			"{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf2, model: SN2700, onyx: "+version+", role: leaf"+extra+"}",
			"{switch: leaf2, port: swp31,", "{switch: leaf2, port: 1/31,", "{switch: leaf2, port: swp32,", "{switch: leaf2, port: 1/32,",
			"switch: leaf2, port: swp1}", "switch: leaf2, port: 1/1}", "switch: leaf2, port: swp2}", "switch: leaf2, port: 1/2}")
		return r.Replace(fabricYAML)
	}
	if _, err := Load("fab.yaml", []byte(onyx("3.6.8190", ""))); err != nil {
		t.Fatalf("the ONYX leaf with 2-byte ASNs: %v", err)
	}
	const cumulus4 = "fabric:\n  leaf_asn: 4200000001\n  spine_asn: 4200000000\n"
	for _, tc := range []struct {
		name, src string
		want      string // "" valid, else a substring of the report
	}{
		{"all Cumulus, 4-byte ASNs", strings.Replace(fabricYAML, "fabric:\n", cumulus4, 1), ""},
		{"an ONYX leaf whose own asn is 4-byte", onyx("3.10.4006", ", asn: 4200000009"),
			"switches[3].asn: ASN 4200000009 of leaf2 is a 4-byte AS number (above 65535, RFC 6793), and leaf2 runs ONYX 3.10.4006:"},
		{"an ONYX leaf peering Cumulus spines of a 4-byte AS", strings.Replace(onyx("3.6.8190", ", asn: 65102"), "fabric:\n", "fabric:\n  spine_asn: 4200000000\n", 1),
			"fabric.spine_asn: ASN 4200000000 of spine1 is a 4-byte AS number (above 65535, RFC 6793), and leaf2 runs ONYX 3.6.8190 and peers with spine1"},
		{"a Cumulus leaf of a 4-byte AS no ONYX switch peers with", strings.Replace(onyx("3.6.8190", ", asn: 65102"),
			"{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf, asn: 4200000001}", 1), ""},
		// leaf1 has its own asn: counted from 65535 it would be 65535,
		// which is reserved (RFC 7300) and refused on its own.
		{"leaf ASNs counted past 65535 on ONYX", strings.Replace(strings.Replace(onyx("3.6.8190", ""), "fabric:\n", "fabric:\n  leaf_asn: 65535\n", 1),
			"{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf, asn: 65101}", 1),
			"fabric.leaf_asn: ASN 65536 of leaf2 is a 4-byte AS number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("fab.yaml", []byte(tc.src))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "\n") != 0):
				t.Errorf("got %v\nwant one finding: %s", err, tc.want)
			}
		})
	}
}
