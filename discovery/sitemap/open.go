package sitemap

// This file decides how a fetched body becomes a readable sitemap: gzip by magic bytes, the size
// cap, the character encoding, and the sniffed format.

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/internal/capread"
	"github.com/politecrawl/etiquette/politeness/kind"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
)

// Errors, for errors.Is. Every error Open and Each return wraps one of them, except an error
// returned by the caller's own function, which Each returns as it is.
var (
	// ErrNotSitemap: the file is neither a sitemap nor a feed (an HTML page, say). Nothing was read.
	ErrNotSitemap = errors.New("not a sitemap")
	// ErrFeed: Each was called on a [Feed]; read [File.Body] with discovery/feeds instead.
	ErrFeed = errors.New("the file is an RSS or Atom feed, not a sitemap")
	// ErrTooLarge: the file grew past Options.MaxBytes once decompressed. The entries before the
	// cap were delivered.
	ErrTooLarge = errors.New("sitemap larger than the size cap")
	// ErrTruncated: the file ends early (no closing tag, a cut gzip stream). The entries before
	// the end were delivered.
	ErrTruncated = errors.New("sitemap ends early")
	// ErrBroken: the file is malformed past what the parser tolerates. The entries before the
	// break were delivered.
	ErrBroken = errors.New("sitemap is malformed")
	// ErrCut: the file lists more entries than Options.MaxURLs. The entries up to the cap were
	// delivered and reading stopped there: the rest of the body is left unread, for the caller
	// to close.
	ErrCut = errors.New("sitemap lists more entries than the entry cap")
)

// Defaults for [Options]. DefaultMaxBytes is kind.SitemapMaxBytes, the door's body cap for
// sitemaps too: one figure for the file and the response.
const (
	DefaultMaxURLs  = 50_000               // sitemaps.org: at most 50,000 URLs per file
	DefaultMaxBytes = kind.SitemapMaxBytes // sitemaps.org: at most 50 MB (52,428,800 bytes) uncompressed
)

// Options are the limits and the scope of one file. The zero value applies sitemaps.org's limits
// and keeps the URLs of the file's own origin.
type Options struct {
	// Allowed is where the file's page URLs may point: an origin ("https://example.org"), or an
	// origin and directory ("https://example.org/shop/"); see discovered.NewFilter. Pass the origin
	// whose robots.txt named the file: a sitemap may live on another host (sitemaps.org
	// "cross-submission"), but it vouches only for the origin that named it. Empty means the
	// file's own origin.
	Allowed string
	// MaxURLs is the number of entries read from one file; at the next one Each stops reading
	// and fails with [ErrCut]. 0 means DefaultMaxURLs.
	MaxURLs int
	// MaxBytes caps the file's size after decompression. 0 means DefaultMaxBytes.
	MaxBytes int64
}

// File is one opened sitemap file: its format is known, its entries not read yet. Call Each once
// (or, for a [Feed], read Body).
type File struct {
	// Format is what the file is.
	Format Format
	// URL is the file's URL, which relative entries resolve against.
	URL string

	opt     Options
	filter  *discovered.Filter
	gzipped bool
	charset string // declared encoding, when the file was transcoded from it
	junk    int
	body    *bufio.Reader // decompressed, capped, from the file's first byte
	size    *capread.Reader
	start   int
	dec     encoding.Encoding // the declared encoding to transcode from; nil for UTF-8
	read    bool
}

// Open reads the start of body (the bytes as fetched, compressed or not) and returns the file,
// ready for Each. fileURL is the URL it was fetched from. Open fails with an error wrapping
// [ErrNotSitemap] for an HTML page or anything else that is not a sitemap or a feed.
func Open(body io.Reader, fileURL string, opt Options) (*File, error) {
	if opt.MaxURLs <= 0 {
		opt.MaxURLs = DefaultMaxURLs
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	own, err := discovered.OriginOf(fileURL)
	if err != nil {
		return nil, fmt.Errorf("sitemap %s: the file URL has no http(s) origin: %w", fileURL, err)
	}
	f := &File{URL: fileURL, opt: opt}

	// gzip is recognised by its magic bytes only: servers send plain XML at ".gz" URLs and gzip
	// at ".xml" URLs, with any Content-Type.
	raw := bufio.NewReader(body)
	var r io.Reader = raw
	if magic, _ := raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return nil, f.fail(0, fmt.Errorf("%w: gzip header: %w", ErrBroken, err))
		}
		r, f.gzipped = zr, true
	}
	f.size = capread.New(r, opt.MaxBytes, func(n int64) error { return fmt.Errorf("%w (%d bytes decompressed)", ErrTooLarge, n) })
	r = f.size

	// A UTF-16 file is transcoded before sniffing, since sniffing reads ASCII markup.
	f.body = bufio.NewReaderSize(r, sniffWindow)
	if bom, _ := f.body.Peek(2); len(bom) == 2 && (bom[0] == 0xFE && bom[1] == 0xFF || bom[0] == 0xFF && bom[1] == 0xFE) {
		f.charset = "UTF-16"
		f.body = bufio.NewReaderSize(unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder().Reader(f.body), sniffWindow)
	}

	head, peekErr := f.body.Peek(sniffWindow)
	full := errors.Is(peekErr, io.EOF)
	s, err := sniff(head, full)
	if err != nil {
		if peekErr != nil && !full {
			return nil, f.fail(0, readError(peekErr))
		}
		return nil, fmt.Errorf("sitemap %s: %w: %v", fileURL, ErrNotSitemap, err)
	}
	f.Format, f.start, f.junk = s.format, s.start, s.junk
	allowed := []string{opt.Allowed}
	if f.Format == Index {
		allowed = append(allowed, own) // sitemaps.org: an index lists sitemaps of its own site
	}
	if f.filter, err = discovered.NewFilter(fileURL, allowed...); err != nil {
		return nil, fmt.Errorf("sitemap %s: Options.Allowed: %w", fileURL, err)
	}
	if s.encoding != "" && f.charset == "" {
		e, name := charset.Lookup(s.encoding)
		if e != nil && name != "utf-8" {
			f.dec, f.charset = e, name
		}
	}
	return f, nil
}

// Body returns the decompressed file from its first byte, capped at Options.MaxBytes. It is the
// way to read a [Feed]; for other formats, call Each instead.
func (f *File) Body() io.Reader { return f.body }

// fail wraps err with the file's URL and how many entries were delivered.
func (f *File) fail(delivered int, err error) error {
	if delivered == 0 {
		return fmt.Errorf("sitemap %s: %w", f.URL, err)
	}
	if delivered == 1 {
		return fmt.Errorf("sitemap %s: %w (the entry before was delivered)", f.URL, err)
	}
	return fmt.Errorf("sitemap %s: %w (the %d entries before were delivered)", f.URL, err, delivered)
}

// readError turns an error from below the parser into one of the package's sentinels.
func readError(err error) error {
	switch {
	case errors.Is(err, ErrTooLarge):
		return err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: %w", ErrTruncated, err)
	default:
		return fmt.Errorf("%w: %w", ErrBroken, err)
	}
}
