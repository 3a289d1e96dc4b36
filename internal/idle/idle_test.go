package idle

import (
	"testing"
	"time"
)

type entry struct {
	name string
	idle Links[entry]
	busy bool
}

func linksOf(e *entry) *Links[entry] { return &e.idle }

// The sweep forgets the least recently used entries idle for long enough, a few per call, and
// keeps a busy one for another round.
func TestSweepForgetsTheOldestIdleEntries(t *testing.T) {
	l := New(linksOf)
	epoch := time.Unix(0, 0)
	var es []*entry
	for i := range 6 {
		e := &entry{name: string(rune('a' + i))}
		es = append(es, e)
		l.Touch(e, epoch.Add(time.Duration(i)*time.Second))
	}
	es[0].busy = true
	l.Touch(es[3], epoch.Add(10*time.Second)) // d used again

	var forgot []string
	sweep := func(now time.Time, after time.Duration, forgettable func(*entry) bool) {
		for range SweepBatch {
			e := l.Idle(now, after)
			if e == nil {
				return
			}
			if !forgettable(e) {
				l.Touch(e, now)
				continue
			}
			l.Remove(e)
			forgot = append(forgot, e.name)
		}
	}
	sweep(epoch.Add(12*time.Second), 5*time.Second, func(e *entry) bool { return !e.busy })
	// a (busy, touched again), b, c, e are looked at; d was used 2 s ago and f 7 s ago.
	if got := len(forgot); got != 3 || forgot[0] != "b" || forgot[1] != "c" || forgot[2] != "e" {
		t.Fatalf("forgot %v, want [b c e]", forgot)
	}
	forgot = nil
	sweep(epoch.Add(12*time.Second), -1, func(*entry) bool { return true })
	if len(forgot) != 0 {
		t.Errorf("a negative after forgot %v", forgot)
	}
	sweep(epoch.Add(100*time.Second), 5*time.Second, func(*entry) bool { return true })
	if len(forgot) != 3 {
		t.Errorf("forgot %v, want the three left", forgot)
	}
}
