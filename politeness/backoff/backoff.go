// Package backoff handles 429/503 and Retry-After. STUB: the host clock work replaces this file.
package backoff

import (
	"net/http"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

type Options struct {
	MaxRetries int
	Sink       events.Sink
}

func Layer(next http.RoundTripper, c hostclock.Clock, o Options) http.RoundTripper { return next }
