package politeness

// This file decides how a caller reads the Sitemap lines of an origin's robots.txt: from the
// copy the robots gate obeys, fetched through the door as the gate fetches it.

import (
	"context"
	"fmt"
	"net/url"

	"github.com/politecrawl/etiquette/politeness/robots"
)

// robotsLookup is the robots.txt keeper of a door and the fetch its robots gate uses.
type robotsLookup struct {
	keeper *robots.Keeper
	fetch  robots.Fetch
}

// Sitemaps returns the Sitemap lines of the robots.txt of u's origin (resolved, http(s) only,
// without duplicates, in file order; see robots.Entry.Sitemaps): the copy the robots gate
// decides by, fetched through the door — identified, budgeted, cached — when the keeper holds
// no fresh one. An origin whose robots.txt is missing or unreachable has none. It fails for a URL
// without an http(s) origin, when ctx ends before robots.txt is known, and with ErrStopped once
// the door was stopped (a stopped door sends nothing, robots.txt included).
func (d *Door) Sitemaps(ctx context.Context, u *url.URL) ([]string, error) {
	if d.pending.stopped.Load() {
		return nil, ErrStopped
	}
	e, err := d.robots.keeper.Lookup(ctx, u, d.robots.fetch)
	if err != nil {
		return nil, fmt.Errorf("robots.txt Sitemap lines: %w", err)
	}
	return e.Sitemaps(), nil
}
