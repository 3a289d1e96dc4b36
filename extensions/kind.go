package extensions

import (
	"runtime"
	"sync"
	"weak"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// kinds remembers which collectors Kind marked, so Clone can mark their clones too. Collectors
// are keyed weakly and forgotten when collected, so marking many short-lived collectors keeps
// none of them alive.
var kinds sync.Map // weak.Pointer[colly.Collector] → kind.Kind

// Kind marks every request c sends as k (kind.Sitemap for a collector that reads sitemaps,
// kind.Feed for feeds, …), so the door caps, caches and reports them as that kind. It sets the
// private kind header in an OnRequest callback; the door moves it into the request's context and
// strips it before anything leaves.
//
// Colly's Clone drops callbacks: use [Clone] to keep the mark on clones. No guarantee of the
// door rests on this callback — an unmarked request is simply treated as HTML.
func Kind(c *colly.Collector, k kind.Kind) {
	key := weak.Make(c)
	if _, loaded := kinds.Swap(key, k); !loaded {
		runtime.AddCleanup(c, func(key weak.Pointer[colly.Collector]) { kinds.Delete(key) }, key)
	}
	c.OnRequest(func(r *colly.Request) {
		if r.Headers.Get(kind.Header) == "" {
			r.Headers.Set(kind.Header, string(k))
		}
	})
}

// Clone is c.Clone() with etiquette's callbacks (those of [Kind]) installed again. The door
// itself needs no callback: a plain c.Clone() shares it (Colly clones share the HTTP backend and
// the context Polite watches).
func Clone(c *colly.Collector) *colly.Collector {
	clone := c.Clone()
	if k, ok := kinds.Load(weak.Make(c)); ok {
		Kind(clone, k.(kind.Kind))
	}
	return clone
}
