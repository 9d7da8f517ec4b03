package workerapply

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/exefile"
)

// TestProbeKeyscanRetries runs probe.sh's keyscan with a stand-in ssh-keyscan
// that answers only from its Nth call: a worker whose sshd misses one probe
// on a loaded VM is not reported as "does not answer" (which made a verify
// after a good apply fail), and one that never answers gives up after 3 tries.
func TestProbeKeyscanRetries(t *testing.T) {
	for _, c := range []struct {
		answerFrom int // the call from which the stand-in answers
		wantKey    bool
		wantCalls  int
	}{
		{answerFrom: 1, wantKey: true, wantCalls: 1},
		{answerFrom: 3, wantKey: true, wantCalls: 3},
		{answerFrom: 4, wantKey: false, wantCalls: 3},
	} {
		dir := t.TempDir()
		count := filepath.Join(dir, "calls")
		fake := `#!/bin/sh
n=$(( $(cat "` + count + `" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "` + count + `"
echo "# 172.16.1.2:12345 SSH-2.0-OpenSSH" >&2
[ "$n" -ge ` + strconv.Itoa(c.answerFrom) + ` ] && echo "[172.16.1.2]:12345 ssh-ed25519 AAAAC3Nza"
exit 0
`
		if err := exefile.Write(filepath.Join(dir, "ssh-keyscan"), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		// sleep is stubbed: the test checks the tries, not the pauses.
		if err := exefile.Write(filepath.Join(dir, "sleep"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		src := script("probe.sh") + "\nport=12345 addr=172.16.1.2\nkeyscan\n"
		cmd := exec.Command("sh", "-c", src)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		out, err := cmd.Output()
		got := string(out)
		if key := keyscanKey(&got); (key != "") != c.wantKey || (err == nil) != c.wantKey {
			t.Errorf("answering from call %d: key %q, err %v; want a key: %v", c.answerFrom, key, err, c.wantKey)
		}
		calls, _ := os.ReadFile(count)
		if n, _ := strconv.Atoi(strings.TrimSpace(string(calls))); n != c.wantCalls {
			t.Errorf("answering from call %d: ssh-keyscan ran %d time(s), want %d", c.answerFrom, n, c.wantCalls)
		}
	}
}
