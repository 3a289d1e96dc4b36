package extensions

// This file decides how a collector says what its requests are for.

import (
	"net/http"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// Kind marks every request c sends as k (kind.Sitemap for a collector that reads sitemaps,
// kind.Feed for feeds, …), so the door caps, caches and reports them as that kind, and asks for
// the kind's media types in Accept. The mark is the private kind header in c's default headers
// (c.Headers); the door moves it into the request's context and strips it before anything leaves.
//
// Clones keep the mark: Colly's Clone shares c.Headers. Kind replaces c.Headers by a copy with
// the mark, so marking a clone leaves its parent as it was. A header a callback sets on one
// request wins over the mark. No guarantee of the door rests on it — an unmarked request is
// simply treated as HTML.
func Kind(c *colly.Collector, k kind.Kind) {
	h := http.Header{}
	if c.Headers != nil {
		h = c.Headers.Clone()
	}
	h.Set(kind.Header, string(k))
	c.Headers = &h
}
