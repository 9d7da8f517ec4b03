package nvueapply

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// TestParseFingerprint: the forms people paste — openssl's output line,
// hex with or without colons, OpenSSH's SHA256:base64 — give the same
// digest; anything else is refused naming the accepted form.
func TestParseFingerprint(t *testing.T) {
	sum := sha256.Sum256([]byte("certificate"))
	hx := hex.EncodeToString(sum[:])
	var colons []string
	for i := 0; i < len(hx); i += 2 {
		colons = append(colons, strings.ToUpper(hx[i:i+2]))
	}
	for _, in := range []string{
		hx, strings.ToUpper(hx), strings.Join(colons, ":"),
		"sha256 Fingerprint=" + strings.Join(colons, ":"),
		"SHA256 Fingerprint=" + strings.Join(colons, ":") + "\n",
		"SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:]),
		"SHA256:" + hx,
	} {
		got, err := parseFingerprint(in)
		if err != nil || !bytes.Equal(got, sum[:]) {
			t.Errorf("%q: %x, %v", in, got, err)
		}
	}
	for _, in := range []string{"junk", hx[:62], hx + "00", "sha256 Fingerprint=", "SHA256:abc"} {
		if _, err := parseFingerprint(in); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
			t.Errorf("%q: accepted or unclear: %v", in, err)
		}
	}
}
