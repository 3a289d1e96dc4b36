// Package feeds reads the entry links of an RSS, Atom or JSON Feed, with the time each entry says
// it was updated (or else published), one entry at a time.
//
// Links obey discovery/discovered: resolved against the feed's URL, http(s), no fragment, no
// userinfo, on the allowed origin; the rest are counted.
//
// # Memory
//
// github.com/mmcdole/gofeed (v1.4.2) parses a whole feed into one value with every item, so a
// feed of a million items is held whole before its first entry can be used. Here the feed is
// cut into its items as it streams in (encoding/xml tokens for RSS and Atom, encoding/json tokens
// for JSON Feed) and gofeed reads one item at a time, wrapped in a one-item feed: its lenient
// date formats, link choice and xml:base handling still decide each entry. Reading stops after
// Options.MaxEntries kept entries, and the caller learns it ([ErrCut]). What one feed holds at a
// time is one item (at most 1 MiB, larger items are counted in Dropped.TooLong) and one run of
// text (cut at 256 KiB), whatever the feed's size; at most Options.MaxBytes are read.
//
// # Faults
//
// Entries before a fault are always delivered: a malformed feed ([ErrBroken]), one longer than
// Options.MaxBytes ([ErrTooLarge]) or one whose body failed while read ([ErrTruncated], e.g. the
// door's body cap) keeps what came before. A DOCTYPE's entities are never expanded ("billion
// laughs" costs nothing), HTML entities are read as their characters, and control characters XML
// forbids are removed.
package feeds

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mmcdole/gofeed"
	gofeedatom "github.com/mmcdole/gofeed/atom"
	gofeedjson "github.com/mmcdole/gofeed/json"
	gofeedrss "github.com/mmcdole/gofeed/rss"
	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/internal/capread"
)

// Defaults for [Options].
const (
	DefaultMaxBytes   = 10 << 20 // as the door's body cap for kind.Feed
	DefaultMaxEntries = 10_000
)

// Errors, for errors.Is. Each one except ErrNotFeed comes after the entries before the fault
// were delivered.
var (
	// ErrNotFeed: the body is not RSS, Atom or JSON Feed (an HTML page, say). Nothing was read.
	ErrNotFeed = errors.New("not a feed")
	// ErrTooLarge: the body is longer than Options.MaxBytes; the rest was not read.
	ErrTooLarge = errors.New("feed larger than the size cap")
	// ErrBroken: the feed's type was recognised but it is malformed from some point on.
	ErrBroken = errors.New("feed is malformed")
	// ErrTruncated: reading the body failed before its end (the error wraps the read error: the
	// door's body cap, a reset connection).
	ErrTruncated = errors.New("feed cut before its end")
	// ErrCut: the feed holds more entries than Options.MaxEntries; reading stopped at the cap.
	ErrCut = errors.New("feed has more entries than the entry cap")
)

// Options are the limits and the scope of one feed. The zero value keeps the links of the feed's
// own origin, with the default limits.
type Options struct {
	// Allowed is where entry links may point (see discovered.NewFilter). Pass the origin of the
	// page that advertised the feed: a feed is often served from elsewhere (a feed service) but
	// vouches only for that origin. Empty means the feed's own origin.
	Allowed string
	// MaxEntries caps the links kept; once it is reached the feed is not read further and the
	// error wraps [ErrCut]. 0 means DefaultMaxEntries.
	MaxEntries int
	// MaxBytes caps the body. 0 means DefaultMaxBytes.
	MaxBytes int64
}

// Result is what one feed yielded.
type Result struct {
	Format string // "rss", "atom" or "json"; "" when the body is not a feed
	Bytes  int64  // body bytes read
	Items  int    // items (entries) read, kept or not
	Kept   int    // entries handed to the caller
	// NoLastMod counts kept entries with neither an updated nor a published time gofeed reads.
	NoLastMod int
	// Dropped counts entries not kept, by reason: an entry without any link counts as Invalid,
	// one over 1 MiB as TooLong.
	Dropped discovered.Dropped
}

// Feed is what [Parse] collected from one feed.
type Feed struct {
	Format  string           // "rss", "atom" or "json"
	Entries []discovered.URL // entry links in feed order; LastMod is the entry's updated, else published, time
	// NoLastMod counts kept entries with neither an updated nor a published time gofeed reads.
	NoLastMod int
	// Dropped counts entries not kept, by reason; an entry without any link counts as Invalid.
	Dropped discovered.Dropped
}

// Parse reads the feed body fetched from fileURL and collects its entries (at most
// Options.MaxEntries of them). The Feed is nil only with [ErrNotFeed] (or a bad fileURL); with any
// other error it holds the entries read before the fault. Prefer [Each], which holds none.
func Parse(body io.Reader, fileURL string, opt Options) (*Feed, error) {
	var out Feed
	res, err := Each(body, fileURL, opt, func(u discovered.URL) error {
		out.Entries = append(out.Entries, u)
		return nil
	})
	if res.Format == "" {
		return nil, err
	}
	out.Format, out.NoLastMod, out.Dropped = res.Format, res.NoLastMod, res.Dropped
	return &out, err
}

// detectWindow is how much of the body is inspected to tell RSS, Atom and JSON Feed apart, as
// gofeed does: the root element comes within the first few KB of any real feed.
const detectWindow = 4096

// Each streams the entry links of the feed body fetched from fileURL to fn, in feed order, and
// returns what the feed yielded. An error from fn stops the feed and is returned as it is; every
// other error wraps one of the package's sentinels, after the entries before the fault.
func Each(body io.Reader, fileURL string, opt Options, fn func(discovered.URL) error) (Result, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.MaxEntries <= 0 {
		opt.MaxEntries = DefaultMaxEntries
	}
	var res Result
	filter, err := discovered.NewFilter(fileURL, opt.Allowed)
	if err != nil {
		return res, fmt.Errorf("feed %s: %w", fileURL, err)
	}
	size := capread.New(body, opt.MaxBytes, func(n int64) error { return fmt.Errorf("%w (%d bytes, Options.MaxBytes)", ErrTooLarge, n) })
	br := bufio.NewReaderSize(size, detectWindow)
	head, peekErr := br.Peek(detectWindow)
	typ := gofeed.DetectFeedType(bytes.NewReader(head))
	if typ == gofeed.FeedTypeUnknown {
		res.Bytes = size.N()
		if peekErr != nil && !errors.Is(peekErr, io.EOF) {
			return res, fmt.Errorf("feed %s: %w", fileURL, readError(peekErr))
		}
		return res, fmt.Errorf("feed %s: %w: neither RSS, Atom nor JSON Feed", fileURL, ErrNotFeed)
	}
	res.Format = map[gofeed.FeedType]string{gofeed.FeedTypeRSS: "rss", gofeed.FeedTypeAtom: "atom", gofeed.FeedTypeJSON: "json"}[typ]

	e := &entries{res: &res, filter: filter, max: opt.MaxEntries, fn: fn, parse: oneItem(typ)}
	if typ == gofeed.FeedTypeJSON {
		err = jsonItems(br, e.item)
	} else {
		err = xmlItems(declaredUTF8(br, head), e.item)
	}
	res.Bytes = size.N()
	res.Dropped = filter.Dropped
	switch {
	case err == nil:
		return res, nil
	case e.fnErr != nil:
		return res, e.fnErr
	case errors.Is(err, errCap):
		return res, fmt.Errorf("feed %s: %w: reading stopped after %d entries (Options.MaxEntries)", fileURL, ErrCut, res.Kept)
	default:
		return res, fmt.Errorf("feed %s: %w (%d entries before were delivered)", fileURL, err, res.Kept)
	}
}

// errCap stops the stream once the entry cap is reached.
var errCap = errors.New("entry cap reached")

// entries turns one-item feeds into entries for the caller.
type entries struct {
	res    *Result
	filter *discovered.Filter
	max    int
	fn     func(discovered.URL) error
	fnErr  error
	parse  func(doc []byte) (*gofeed.Feed, error)
}

// oneItem returns gofeed's parser and translator for a one-item feed of type typ, without the
// type detection gofeed.Parser repeats for every document.
func oneItem(typ gofeed.FeedType) func(doc []byte) (*gofeed.Feed, error) {
	switch typ {
	case gofeed.FeedTypeAtom:
		p, tr := &gofeedatom.Parser{}, &gofeed.DefaultAtomTranslator{}
		return func(doc []byte) (*gofeed.Feed, error) {
			f, err := p.Parse(bytes.NewReader(doc))
			if err != nil {
				return nil, err
			}
			return tr.Translate(f)
		}
	case gofeed.FeedTypeJSON:
		p, tr := &gofeedjson.Parser{}, &gofeed.DefaultJSONTranslator{}
		return func(doc []byte) (*gofeed.Feed, error) {
			f, err := p.Parse(bytes.NewReader(doc))
			if err != nil {
				return nil, err
			}
			return tr.Translate(f)
		}
	}
	p, tr := &gofeedrss.Parser{}, &gofeed.DefaultRSSTranslator{}
	return func(doc []byte) (*gofeed.Feed, error) {
		f, err := p.Parse(bytes.NewReader(doc))
		if err != nil {
			return nil, err
		}
		return tr.Translate(f)
	}
}

// item reads one item, given as a one-item feed document; nil means the item was too large.
func (e *entries) item(doc []byte) error {
	if e.res.Kept >= e.max {
		return errCap
	}
	e.res.Items++
	if doc == nil {
		e.filter.Dropped.TooLong++
		return nil
	}
	parsed, err := e.parse(doc)
	if err != nil || len(parsed.Items) == 0 || parsed.Items[0] == nil {
		e.filter.Dropped.Invalid++
		return nil
	}
	it := parsed.Items[0]
	ref := entryLink(it)
	if ref == "" {
		e.filter.Dropped.Invalid++
		return nil
	}
	loc, ok := e.filter.Keep(ref)
	if !ok {
		return nil
	}
	u := discovered.URL{Loc: loc}
	switch {
	case it.UpdatedParsed != nil:
		u.LastMod = *it.UpdatedParsed
	case it.PublishedParsed != nil:
		u.LastMod = *it.PublishedParsed
	default:
		e.res.NoLastMod++
	}
	e.res.Kept++
	if err := e.fn(u); err != nil {
		e.fnErr = err
		return err
	}
	return nil
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

// readError turns an error from below the parser into one of the package's sentinels.
func readError(err error) error {
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrTruncated, err)
}
