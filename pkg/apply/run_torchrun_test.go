package apply

import (
	"bytes"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// torchrun's tee prefixes become host and ranks; other lines get the host.
func TestTorchrunNodeWriter(t *testing.T) {
	inv := inventory.Reference() // 2 GPUs per host
	var b bytes.Buffer
	w := (&nodeLines{}).writer(&b, inv, 1)
	if _, err := w.Write([]byte("[default1]:loss 0.5\n[default0]:loss 0.4\r\nWARNING:torch.distributed.run:\n[rank3]:x\npartial")); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	want := "clx-mld-42[rank 3, local 1]: loss 0.5\nclx-mld-42[rank 2, local 0]: loss 0.4\nclx-mld-42: WARNING:torch.distributed.run:\nclx-mld-42[rank 3, local 1]: x\nclx-mld-42: partial\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// torchrun's report of a failed process is a failure at once, with the
// process's status (a signal as 128+N); only the launcher's own line is:
// a process's line (tagged "[default0]:" or "[rank3]:") that quotes the
// report, or an untagged line that has it elsewhere than behind the
// launcher's logger prefix, is output.
func TestTorchrunFailureReport(t *testing.T) {
	inv := inventory.Reference()
	type fail struct{ node, local, code int }
	var got []fail
	lines := &nodeLines{failed: func(node, local, code int) { got = append(got, fail{node, local, code}) }}
	w := lines.writer(&bytes.Buffer{}, inv, 2)
	_, _ = w.Write([]byte("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 3) local_rank: 1 (pid: 57) of binary: /usr/bin/python3.11\n" +
		"E0101 10:00:00.000 1 torch/distributed/elastic/multiprocessing/api.py:881] failed (exitcode: -9) local_rank: 0 (pid: 58) of binary: /usr/bin/python3\n" +
		"[default0]:my own failed (exitcode: 4) local_rank: 0 text\n" +
		"[default0]:E0101 10:00:00.000000 140 torch/distributed/elastic/multiprocessing/api.py:881] failed (exitcode: 1) local_rank: 0 (pid: 9) of binary: /usr/bin/python3\n" +
		"[default1]:ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 9) of binary: /usr/bin/python3\n" +
		"[rank4]:retrying after: failed (exitcode: 1) local_rank: 0 (pid: 9)\n" +
		"INFO:my.job:the last run ended: ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 9)\n" +
		"epoch 3] failed (exitcode: 2) local_rank: 1 (pid: 9)\n" +
		"E0904 06:36:35.123000 140 /usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) local_rank: 1 (pid: 2215) of binary: /usr/bin/python3\n"))
	if want := []fail{{2, 1, 3}, {2, 0, 137}, {2, 1, 1}}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("failures %v, want %v", got, want)
	}
}
