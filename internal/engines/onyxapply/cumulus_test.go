package onyxapply

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// A Cumulus switch never reaches the ONYX engine's session: given one
// (without Options.Select, which pkg/apply sets), apply and check stop on
// it with ErrCumulus before they connect, while the ONYX switch beside it
// is configured as usual.
func TestCumulusSwitchRefused(t *testing.T) {
	inv := loadInv(t, [3]string{"s1", "SN2700", "3.6.8190"}, [3]string{"s2", "SN2700", "3.6.8190"})
	r := newRig(t, inv)
	inv.Switches[1].ONYX, inv.Switches[1].Cumulus = inventory.Version{}, inventory.MustVersion("5.9.1")
	res, err := r.run(t)
	if err == nil || !errors.Is(res[1].Err, ErrCumulus) {
		t.Fatalf("err = %v, s2: %v", err, res[1].Err)
	}
	if want := "runs Cumulus Linux 5.9.1: this engine configures ONYX over SSH, not Cumulus Linux (NVUE)"; !strings.HasPrefix(res[1].Err.Error(), want) {
		t.Errorf("s2: %v\nwant prefix: %s", res[1].Err, want)
	}
	if got := r.sims[1].Received(); len(got) != 0 || res[1].Backup != "" {
		t.Errorf("the Cumulus switch's address received %q (backup %q)", got, res[1].Backup)
	}
	if res[0].Err != nil || len(r.sims[0].Received()) == 0 || !res[0].Saved {
		t.Errorf("the ONYX switch: err %v, received %d command(s), saved %v", res[0].Err, len(r.sims[0].Received()), res[0].Saved)
	}

	rs, err := Check(context.Background(), inv, r.opts)
	if err == nil || !strings.Contains(err.Error(), "not Cumulus Linux") {
		t.Errorf("check: err = %v", err)
	}
	var s2 []readiness.Result
	for _, x := range rs {
		if x.Machine == "s2" {
			s2 = append(s2, x)
		}
	}
	if len(s2) == 0 || s2[0].Check != CheckConnect || !strings.Contains(s2[0].Found, "not Cumulus Linux") {
		t.Errorf("check of s2: %+v", s2)
	}
}
