package waitline

import (
	"slices"
	"strings"
	"testing"
)

// robots.txt requests join behind the robots.txt requests already waiting and ahead of every
// page; pages join at the back.
func TestJoin(t *testing.T) {
	isRobots := func(s string) bool { return strings.HasPrefix(s, "robots") }
	var line []string
	for _, w := range []string{"page1", "robots1", "page2", "robots2", "page3"} {
		line = Join(line, w, isRobots)
	}
	if want := []string{"robots1", "robots2", "page1", "page2", "page3"}; !slices.Equal(line, want) {
		t.Errorf("line %v, want %v", line, want)
	}
}
