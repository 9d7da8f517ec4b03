package main

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
