package sitemap

// This file decides which entries of an opened file reach the caller, streaming them through
// gopher-parse-sitemap.

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"

	gopher "github.com/oxffaa/gopher-parse-sitemap"
	"github.com/politecrawl/etiquette/discovery/discovered"
	"golang.org/x/text/transform"
)

// Result is what one file yielded.
type Result struct {
	Format  Format
	Gzipped bool   // the body was gzip, whatever its name said
	Charset string // the encoding the file was transcoded from; "" for UTF-8
	Bytes   int64  // the file's size after decompression (as far as it was read)
	Junk    int    // bytes skipped before "<?xml"

	// Entries counts the file's entries: <url> or <sitemap> elements, or non-empty text lines.
	Entries int
	// Kept counts the entries handed to the caller.
	Kept int
	// NoLastMod counts kept entries without a <lastmod> in a form gopher reads (RFC 3339 or
	// YYYY-MM-DD); they carry the zero time.
	NoLastMod int
	// Dropped counts the entries not handed on, by reason.
	Dropped discovered.Dropped
	// Repairs counts the mends made to the bytes before parsing.
	Repairs Repairs
}

// Each streams the file's entries to fn in file order and returns what the file yielded. For a
// [URLSet] or [Text] file an entry is a page URL; for an [Index] it is the URL of another sitemap
// file, which the caller passes to [Walk.Add]. An [Index] keeps sitemap URLs on Options.Allowed
// and on the index's own origin (sitemaps.org: an index lists sitemaps of its own site).
//
// On a broken, truncated or oversized file, the entries before the fault have been delivered
// and the error says which fault (see the package's table). An error from fn stops the file and
// is returned as it is. Each reads the file once; a second call fails.
func (f *File) Each(fn func(discovered.URL) error) (Result, error) {
	res := Result{Format: f.Format, Gzipped: f.gzipped, Charset: f.charset, Junk: f.junk}
	if f.read {
		return res, fmt.Errorf("sitemap %s: Each called twice: the body is already read", f.URL)
	}
	f.read = true
	if f.Format == Feed {
		return res, fmt.Errorf("sitemap %s: %w; read File.Body with discovery/feeds", f.URL, ErrFeed)
	}
	filter := f.filter
	if _, err := f.body.Discard(f.start); err != nil {
		return res, f.fail(0, readError(err))
	}

	var fnErr error
	take := func(loc string, lastmod func() *time.Time) error {
		if res.Entries >= f.opt.MaxURLs {
			return errCap // the rest of the file is not read: the caller closes the body
		}
		res.Entries++
		s, ok := filter.Keep(loc)
		if !ok {
			return nil
		}
		u := discovered.URL{Loc: s}
		if t := lastmod(); t != nil {
			u.LastMod = *t
		} else {
			res.NoLastMod++
		}
		res.Kept++
		fnErr = fn(u)
		return fnErr
	}

	rep := &repair{}
	var err error
	switch f.Format {
	case URLSet:
		err = gopher.Parse(f.xml(rep), func(e gopher.Entry) error {
			return take(e.GetLocation(), e.GetLastModified)
		})
	case Index:
		err = gopher.ParseIndex(f.xml(rep), func(e gopher.IndexEntry) error {
			return take(e.GetLocation(), e.GetLastModified)
		})
	case Text:
		err = f.lines(func(line []byte, tooLong bool) error {
			switch {
			case res.Entries >= f.opt.MaxURLs:
				return errCap
			case tooLong:
				res.Entries++
				filter.Dropped.TooLong++
			case !hasFoldPrefix(line, "http://") && !hasFoldPrefix(line, "https://"):
				// A text sitemap lists absolute URLs; resolving prose against the file's URL
				// would invent pages.
				res.Entries++
				filter.Dropped.Invalid++
			default:
				return take(string(line), noTime)
			}
			return nil
		})
	}
	res.Bytes = f.size.N()
	res.Dropped = filter.Dropped
	res.Repairs = rep.Repairs
	switch {
	case err == nil:
		return res, nil
	case fnErr != nil && errors.Is(err, fnErr):
		return res, fnErr
	case errors.Is(err, errCap):
		return res, f.fail(res.Kept, fmt.Errorf("%w: reading stopped after %d entries (Options.MaxURLs), %d bytes read", ErrCut, f.opt.MaxURLs, res.Bytes))
	default:
		return res, f.fail(res.Kept, parseError(err))
	}
}

// xml returns the stream gopher reads: from the root element (so the XML declaration, with its
// encoding, and any DOCTYPE are gone), transcoded to UTF-8, repaired.
func (f *File) xml(rep *repair) io.Reader {
	if f.dec == nil {
		return transform.NewReader(f.body, rep)
	}
	return transform.NewReader(f.body, transform.Chain(f.dec.NewDecoder(), rep))
}

// maxLine bounds a text sitemap's line held in memory; a longer line is counted as too long.
const maxLine = 4 << 10

// lines calls fn with each non-empty trimmed line of a text file, or with tooLong set (and no
// line) for a line longer than maxLine.
func (f *File) lines(fn func(line []byte, tooLong bool) error) error {
	var r io.Reader = f.body
	if f.dec != nil {
		r = transform.NewReader(r, f.dec.NewDecoder())
	}
	br := bufio.NewReaderSize(r, maxLine)
	skipping := false
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !skipping {
				if ferr := fn(nil, true); ferr != nil {
					return ferr
				}
			}
			skipping = true
			continue
		case skipping:
			skipping = false
		default:
			if line = bytes.TrimSpace(line); len(line) > 0 {
				if ferr := fn(line, false); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func noTime() *time.Time { return nil }

// errCap stops the parser at Options.MaxURLs.
var errCap = errors.New("entry cap reached")

// parseError turns an error out of the parser into one of the package's sentinels.
func parseError(err error) error {
	var syn *xml.SyntaxError
	switch {
	case errors.As(err, &syn) && syn.Msg == "unexpected EOF":
		return fmt.Errorf("%w: no closing tag at line %d", ErrTruncated, syn.Line)
	case errors.As(err, &syn):
		return fmt.Errorf("%w: line %d: %s", ErrBroken, syn.Line, syn.Msg)
	default:
		return readError(err)
	}
}
