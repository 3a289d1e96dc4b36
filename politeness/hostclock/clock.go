// Package hostclock decides when a request may start. STUB: the host clock work replaces this file.
package hostclock

import (
	"context"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

type Outcome struct {
	Status     int
	RetryAfter time.Duration
	Err        error
}

type Lease interface{ Done(Outcome) }

type Clock interface {
	Acquire(ctx context.Context, key string, k kind.Kind) (Lease, error)
	SetFloor(key string, interval time.Duration)
}

type Config struct {
	Rate        float64
	Authorized  map[string]float64
	Concurrency int
}

type Local struct{}

func NewLocal(cfg Config) (*Local, error) { return &Local{}, nil }

type nopLease struct{}

func (nopLease) Done(Outcome) {}

func (l *Local) Acquire(ctx context.Context, key string, k kind.Kind) (Lease, error) {
	return nopLease{}, ctx.Err()
}
func (l *Local) SetFloor(key string, interval time.Duration) {}

type LayerOptions struct {
	Timeout time.Duration
	Sink    events.Sink
}

func Layer(next http.RoundTripper, c Clock, o LayerOptions) http.RoundTripper { return next }
