package extensions

import (
	"context"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
)

// A page of an Async collector that reports neither OnScraped nor OnError (a callback registered
// after Discover aborted it) must not hold its worker for ever: once every worker is parked and
// the collector is idle, the wait ends.
func TestAnAsyncWaitEndsWhenTheCollectorIsIdle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := colly.NewCollector(colly.Async(true))
	a := &asyncWaits{waiting: map[*visit]struct{}{}, workers: 1, kick: make(chan struct{}, 1)}
	go a.watch(ctx, c)

	ended := make(chan struct{})
	v := &visit{done: make(chan struct{})}
	go func() {
		a.wait(ctx, v) // the only worker, waiting for a page that will never say it ended
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end though the collector is idle")
	}
}
