package etiquettetest

import (
	"errors"
	"runtime/debug"
	"testing"
)

func TestCollyVersionRange(t *testing.T) {
	dep := func(v string) *debug.Module { return &debug.Module{Path: CollyModule, Version: v} }
	tests := []struct {
		name string
		deps []*debug.Module
		want string
		ok   bool
	}{
		{"the required version", []*debug.Module{{Path: "example.org/x", Version: "v1.0.0"}, dep("v2.3.0")}, "v2.3.0", true},
		{"a patch release", []*debug.Module{dep("v2.3.4")}, "v2.3.4", true},
		{"a commit after v2.3.0", []*debug.Module{dep("v2.3.1-0.20250101000000-0123456789ab")}, "v2.3.1-0.20250101000000-0123456789ab", true},
		{"older", []*debug.Module{dep("v2.2.0")}, "v2.2.0", false},
		{"the next minor release", []*debug.Module{dep("v2.4.0")}, "v2.4.0", false},
		{"v2.30", []*debug.Module{dep("v2.30.0")}, "v2.30.0", false},
		{"replaced by a version", []*debug.Module{{Path: CollyModule, Version: "v2.3.0", Replace: &debug.Module{Path: "example.org/fork", Version: "v2.5.0"}}}, "v2.5.0", false},
		{"replaced by a directory", []*debug.Module{{Path: CollyModule, Version: "v2.3.0", Replace: &debug.Module{Path: "../colly"}}}, "", false},
		{"no Colly", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collyIn(&debug.BuildInfo{Deps: tt.deps})
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("collyIn = %q, %v; want %q, accepted %v", got, err, tt.want, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrCollyUntested) {
				t.Errorf("error %v does not wrap ErrCollyUntested", err)
			}
		})
	}
}

// TestCheckCollyVersionFailsWithoutColly: this package's test binary links no Colly, so the
// check fails the test it is given, saying so.
func TestCheckCollyVersionFailsWithoutColly(t *testing.T) {
	var rec errorsTB
	if CheckCollyVersion(&rec) || len(rec.errors) != 1 {
		t.Errorf("CheckCollyVersion in a binary without Colly: kept, or %d errors reported: %q", len(rec.errors), rec.errors)
	}
}

// errorsTB records what CheckCollyVersion reports.
type errorsTB struct{ errors []string }

func (e *errorsTB) Helper()                           {}
func (e *errorsTB) Errorf(format string, args ...any) { e.errors = append(e.errors, format) }
