// Package idle keeps per-origin state in order of last use, so that a sweep looks at the least
// recently used first and forgets what has been idle long enough: the bounded forgetting, with
// no goroutine of its own, that the host clock, the shared Redis clock's lines and the frontier
// use so that their memory follows the origins in use, not every origin ever seen.
package idle

import "time"

// SweepBatch bounds the entries one Sweep looks at: more than the one entry a call of its owner
// can add, so idle entries go faster than new ones arrive, and few enough that no call pays for a
// scan of every entry.
const SweepBatch = 4

// Links are the fields an entry embeds to be kept in a [List]. The zero value is an entry in no
// list.
type Links[T any] struct {
	older, younger *T
	used           time.Time
}

// Used returns when the entry was last touched.
func (l *Links[T]) Used() time.Time { return l.used }

// List holds entries of type T, which embed [Links] reached through the function given to
// [New], in order of last use. Its methods require the owner's lock held; it has none itself.
type List[T any] struct {
	young, old *T
	links      func(*T) *Links[T]
}

// New returns an empty list whose entries keep their links where links says.
func New[T any](links func(*T) *Links[T]) List[T] { return List[T]{links: links} }

// Touch marks x used at now and moves it to the young end of the list (adding it if needed).
func (l *List[T]) Touch(x *T, now time.Time) {
	lx := l.links(x)
	lx.used = now
	if l.young == x {
		return
	}
	l.Remove(x)
	lx.older = l.young
	if l.young != nil {
		l.links(l.young).younger = x
	}
	l.young = x
	if l.old == nil {
		l.old = x
	}
}

// Remove takes x out of the list; x in no list is left alone.
func (l *List[T]) Remove(x *T) {
	lx := l.links(x)
	if lx.younger != nil {
		l.links(lx.younger).older = lx.older
	} else if l.young == x {
		l.young = lx.older
	}
	if lx.older != nil {
		l.links(lx.older).younger = lx.younger
	} else if l.old == x {
		l.old = lx.younger
	}
	lx.older, lx.younger = nil, nil
}

// Idle returns the least recently used entry when it has been unused for after, else nil (and
// always nil for a negative after). A sweep calls it up to SweepBatch times, and either removes
// the entry it gets or touches it, to look at it again after another after:
//
//	for range idle.SweepBatch {
//		x := list.Idle(now, after)
//		if x == nil {
//			break
//		}
//		if !forgettable(x) {
//			list.Touch(x, now)
//			continue
//		}
//		list.Remove(x)
//		// … forget x
//	}
//
// (A Sweep taking the two decisions as functions would allocate their closures on every call of
// the owner's hot path.)
func (l *List[T]) Idle(now time.Time, after time.Duration) *T {
	if after < 0 || l.old == nil || now.Sub(l.links(l.old).used) < after {
		return nil
	}
	return l.old
}
