package politeness

import (
	"testing"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
)

// A policy that asks for more spacing by response time than the process-wide clock gives gets a
// stricter clock of its own; the default, or less, shares the process-wide one unchanged.
func TestLatencyFactorOfAPolicy(t *testing.T) {
	id := identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"}
	for _, tt := range []struct {
		factor   float64
		stricter bool
	}{{0, false}, {hostclock.DefaultLatencyFactor, false}, {-1, false}, {4, true}} {
		budget, stricter, err := Policy{Identity: id, LatencyFactor: tt.factor}.clocks()
		if err != nil {
			t.Fatal(err)
		}
		if budget != hostclock.Shared() || (stricter != nil) != tt.stricter {
			t.Errorf("LatencyFactor %g: stricter clock %v, want %v", tt.factor, stricter != nil, tt.stricter)
		}
	}
}
