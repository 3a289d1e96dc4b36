// Package feeds reads the entry links of an RSS, Atom or JSON Feed, with the time each entry says
// it was updated (or else published), through github.com/mmcdole/gofeed.
//
// Links obey discovery/discovered: resolved against the feed's URL, http(s), no fragment, no
// userinfo, on the allowed origin; the rest are counted. gofeed parses a whole feed into memory,
// so the body is capped (Options.MaxBytes, the door's cap for kind.Feed) and at most
// Options.MaxEntries links are kept. gofeed returns nothing from a malformed feed, so neither
// does Parse: it fails with [ErrBroken].
package feeds

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mmcdole/gofeed"
	"github.com/politecrawl/etiquette/discovery/discovered"
)

// Defaults for [Options].
const (
	DefaultMaxBytes   = 10 << 20 // as the door's body cap for kind.Feed
	DefaultMaxEntries = 10_000
)

// Errors, for errors.Is.
var (
	// ErrNotFeed: the body is not RSS, Atom or JSON Feed (an HTML page, say).
	ErrNotFeed = errors.New("not a feed")
	// ErrTooLarge: the body is longer than Options.MaxBytes; nothing is returned.
	ErrTooLarge = errors.New("feed larger than the size cap")
	// ErrBroken: the feed's type was recognised but it could not be parsed.
	ErrBroken = errors.New("feed is malformed")
)

// Options are the limits and the scope of one feed. The zero value keeps the links of the feed's
// own origin, with the default limits.
type Options struct {
	// Allowed is where entry links may point (see discovered.NewFilter). Pass the origin of the
	// page that advertised the feed: a feed is often served from elsewhere (a feed service) but
	// vouches only for that origin. Empty means the feed's own origin.
	Allowed string
	// MaxEntries caps the links kept; later ones are counted in Dropped.OverLimit. 0 means
	// DefaultMaxEntries.
	MaxEntries int
	// MaxBytes caps the body. 0 means DefaultMaxBytes.
	MaxBytes int64
}

// Feed is what one feed yielded.
type Feed struct {
	Format  string           // "rss", "atom" or "json"
	Entries []discovered.URL // entry links in feed order; LastMod is the entry's updated, else published, time
	// NoLastMod counts kept entries with neither an updated nor a published time gofeed reads.
	NoLastMod int
	// Dropped counts entries not kept, by reason; an entry without any link counts as Invalid.
	Dropped discovered.Dropped
}

// Parse reads the feed body fetched from fileURL.
func Parse(body io.Reader, fileURL string, opt Options) (*Feed, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.MaxEntries <= 0 {
		opt.MaxEntries = DefaultMaxEntries
	}
	filter, err := discovered.NewFilter(fileURL, opt.Allowed)
	if err != nil {
		return nil, fmt.Errorf("feed %s: %w", fileURL, err)
	}

	limited := &io.LimitedReader{R: body, N: opt.MaxBytes + 1}
	parsed, err := gofeed.NewParser().Parse(limited)
	switch {
	case limited.N <= 0:
		return nil, fmt.Errorf("feed %s: %w (%d bytes)", fileURL, ErrTooLarge, opt.MaxBytes)
	case errors.Is(err, gofeed.ErrFeedTypeNotDetected):
		return nil, fmt.Errorf("feed %s: %w: neither RSS, Atom nor JSON Feed", fileURL, ErrNotFeed)
	case err != nil:
		return nil, fmt.Errorf("feed %s: %w: %w", fileURL, ErrBroken, err)
	}

	out := &Feed{Format: parsed.FeedType}
	for _, item := range parsed.Items {
		if item == nil {
			continue
		}
		if len(out.Entries) >= opt.MaxEntries {
			filter.Dropped.OverLimit++
			continue
		}
		ref := entryLink(item)
		if ref == "" {
			filter.Dropped.Invalid++
			continue
		}
		loc, ok := filter.Keep(ref)
		if !ok {
			continue
		}
		u := discovered.URL{Loc: loc}
		switch {
		case item.UpdatedParsed != nil:
			u.LastMod = *item.UpdatedParsed
		case item.PublishedParsed != nil:
			u.LastMod = *item.PublishedParsed
		default:
			out.NoLastMod++
		}
		out.Entries = append(out.Entries, u)
	}
	out.Dropped = filter.Dropped
	return out, nil
}

// entryLink is the entry's page: its link (Atom: rel="alternate"), else its first other link,
// else a guid that is an http(s) URL (RSS 2.0 guids are permalinks by default; WordPress marks
// its "?p=123" guids isPermaLink="false", but they still lead to the post).
func entryLink(item *gofeed.Item) string {
	if item.Link != "" {
		return item.Link
	}
	for _, l := range item.Links {
		if l != "" {
			return l
		}
	}
	if g := strings.TrimSpace(item.GUID); hasHTTPScheme(g) {
		return g
	}
	return ""
}

func hasHTTPScheme(s string) bool {
	s = strings.ToLower(s)
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}
