// Which time the clock reads and waits on.

package hostclock

import "time"

// Time is the clock the schedule reads and waits on: the system's by default (Config.Time nil);
// tests inject a manual clock so that the policy's arithmetic is checked exactly, without sleeping.
type Time interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now (at once when d ≤ 0).
	NewTimer(d time.Duration) Timer
}

// Timer is the part of [time.Timer] the clock uses.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// systemTime is the real time.
type systemTime struct{}

func (systemTime) Now() time.Time { return time.Now() }

func (systemTime) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }

// SystemTime returns the real time, for other packages that take a [Time] (the crawl frontier)
// and default to it.
func SystemTime() Time { return systemTime{} }
