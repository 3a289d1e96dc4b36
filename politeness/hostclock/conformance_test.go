package hostclock_test

import (
	"testing"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/hostclock/clocktest"
)

// The behaviour table every Clock passes, in real time; a clock shared through Redis runs the
// same one (redisstore).
func TestLocalPassesTheClockTable(t *testing.T) {
	clocktest.Run(t, func(t *testing.T, cfg hostclock.Config) hostclock.Clock {
		c, err := hostclock.NewLocal(cfg)
		if err != nil {
			t.Fatalf("NewLocal: %v", err)
		}
		return c
	})
}
