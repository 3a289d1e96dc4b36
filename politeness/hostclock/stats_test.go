package hostclock

import (
	"errors"
	"testing"
	"time"
)

func TestStats(t *testing.T) {
	l, m := newTestLocal(t, Config{})
	for _, o := range []Outcome{{Status: 200}, {Status: 429}, {Status: 503}, {Status: 500}, {Err: errors.New("refused")}, {Status: 200}} {
		acquire(t, m, l, "b.example").Done(o)
	}
	acquire(t, m, l, "a.example").Done(Outcome{})
	l.SetFloor("c.example", botSource, 3*time.Second)
	st := l.Stats()
	if len(st) != 3 || st[0].Origin != "a.example" || st[1].Origin != "b.example" || st[2].Origin != "c.example" {
		t.Fatalf("Stats origins = %+v", st)
	}
	b := st[1]
	want := OriginStats{Origin: "b.example", Requests: 6, Waits: 5, TooManyRequests: 1, Unavailable: 1, ServerErrors: 1,
		TransportErrors: 1, Pauses: 4, Rate: 1.5, Waited: b.Waited}
	if b != want {
		t.Errorf("b.example stats = %+v\nwant %+v", b, want)
	}
	if b.Waited <= 0 {
		t.Errorf("Waited = %v", b.Waited)
	}
	if st[2].Floor != 3*time.Second || st[0].Requests != 1 || st[0].Waits != 0 {
		t.Errorf("stats = %+v", st)
	}
}
