package applyplan

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

func TestCount(t *testing.T) {
	c := func(n int) []Change { return make([]Change, n) }
	ms := []Machine{
		{Status: Planned, Changes: c(3)},
		{Status: Blocked, Changes: c(2)},
		{Status: Blocked, Changes: c(0)}, // only waiting changes
		{Status: UpToDate},
		{Status: Failed, Changes: c(5)}, // not pushed
		{Status: Changed, Changes: c(4)},
	}
	if changes, machines := Count(ms); changes != 5 || machines != 2 {
		t.Errorf("Count = %d changes on %d machines, want 5 on 2", changes, machines)
	}
}

func TestGatePass(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var nilGate Gate
	if !nilGate.Pass(ctx, nil) {
		t.Error("a nil gate refused")
	}
	var seen int
	g := Gate(func(_ context.Context, ms []Machine) bool { seen = len(ms); return false })
	if g.Pass(ctx, make([]Machine, 2)) || seen != 2 {
		t.Errorf("gate: seen %d", seen)
	}
	cancel()
	if nilGate.Pass(ctx, nil) {
		t.Error("a nil gate let a cancelled run through")
	}
}

// The document's field names are the schema's (docs/json.md): a renamed
// field must fail here before it reaches a reader.
func TestDocumentFieldNames(t *testing.T) {
	d := &Document{Schema: SchemaApply, Kind: "result", Interrupted: true,
		Targets:  []Target{{Name: "esxi", Error: "e", Summary: "s", Seconds: 1}},
		Machines: []Machine{{Target: "esxi", Name: "vm1", Kind: KindVM, Address: "esx1", Status: Blocked, Error: "x", BlockedBy: "esxi-host esx1", Changes: []Change{{Op: Update, Item: "firmware", From: "bios", To: "efi", Text: "t"}}, Waiting: []string{"w"}, Notes: []string{"n"}, Seconds: 2}}}
	var b bytes.Buffer
	if err := d.Encode(&b); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"":         {"schema", "kind", "cluster", "inventory", "interrupted", "targets", "machines"},
		"targets":  {"target", "error", "summary", "seconds"},
		"machines": {"target", "machine", "kind", "address", "status", "error", "blocked_by", "changes", "waiting", "notes", "seconds"},
		"changes":  {"op", "item", "from", "to", "text"},
	}
	check := func(where string, m map[string]any) {
		for _, k := range want[where] {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no field %q in %v", where, k, m)
			}
		}
		if len(m) != len(want[where]) {
			t.Errorf("%s: %d fields, want %d", where, len(m), len(want[where]))
		}
	}
	check("", got)
	check("targets", got["targets"].([]any)[0].(map[string]any))
	m := got["machines"].([]any)[0].(map[string]any)
	check("machines", m)
	check("changes", m["changes"].([]any)[0].(map[string]any))
}

// TestStatusOf: interruption wins over failure, failure over an empty
// plan, and a non-empty plan is Changed only when done.
func TestStatusOf(t *testing.T) {
	for _, tc := range []struct {
		interrupted, failed, upToDate, done bool
		want                                Status
	}{
		{true, true, false, false, Interrupted},
		{false, true, true, false, Failed},
		{false, false, true, false, UpToDate},
		{false, false, false, true, Changed},
		{false, false, false, false, Planned},
	} {
		if got := StatusOf(tc.interrupted, tc.failed, tc.upToDate, tc.done); got != tc.want {
			t.Errorf("StatusOf(%v, %v, %v, %v) = %s, want %s", tc.interrupted, tc.failed, tc.upToDate, tc.done, got, tc.want)
		}
	}
}
