package extensions

// This file decides what identifying a collector takes: the whole door.

import (
	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
)

// Identify is Polite with the default policy for id: 3 request starts per second per host, 2 in
// flight, robots.txt for id's crawl token, no cookies, a disk cache in the user cache directory.
// There is no lighter way to identify a collector: a User-Agent set anywhere but the transport
// misses robots.txt fetches, redirect hops and retries (and is overwritten by callbacks such as
// Colly's RandomUserAgent), so identifying means installing the door.
func Identify(c *colly.Collector, id identity.Identity) error {
	return Polite(c, politeness.Policy{Identity: id})
}
