package extensions

import (
	"runtime"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/politeness/kind"
)

func TestKindForgetsCollectedCollectors(t *testing.T) {
	marked := func() int {
		n := 0
		kinds.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := marked()
	for range 10 {
		Kind(colly.NewCollector(), kind.Feed)
	}
	if marked() < before+10 {
		t.Fatalf("%d marked collectors, want at least %d", marked(), before+10)
	}
	deadline := time.Now().Add(5 * time.Second)
	for marked() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := marked(); n > before {
		t.Errorf("%d collected collectors are still remembered", n-before)
	}
}
