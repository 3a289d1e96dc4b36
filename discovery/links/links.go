// Package links finds the links of an HTML page as it streams in, without building a document
// tree: the <a href> and <area href> links a crawler may follow, the page's <base href>, its
// robots meta (nofollow, none), rel=nofollow on links, and the typed <link> elements of its head
// (alternate, sitemap, the WordPress REST API, api-catalog) for discovery.
//
// It reads with golang.org/x/net/html's Tokenizer, so memory stays bounded by the longest token
// (Options.MaxTokenBytes), not the page: a 10 MB page with 384,444 links costs a few megabytes,
// where a DOM (goquery) of it peaks near 380 MB. Every URL reported is absolute, http or https,
// without fragment and without userinfo: a link never carries credentials the caller did not give.
//
// Most callers want [Extract]; [HeaderNofollow] reads the X-Robots-Tag response header.
package links

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Defaults of [Options].
const (
	// DefaultMaxLinks is the number of links one page may contribute. It matches the frontier's
	// default queue per origin (frontier.DefaultMaxQueued): one page may fill an origin's queue,
	// but no more, so links beyond it would only be dropped there. The rest are counted, not
	// resolved.
	DefaultMaxLinks = 100_000
	// DefaultMaxAttrBytes is the longest attribute value read (href, rel, content, type, title).
	// A longer href is skipped and counted; a longer title is cut. It is the frontier's URL limit
	// (frontier.MaxURLBytes, the sitemaps protocol's 2,048).
	DefaultMaxAttrBytes = 2048
	// DefaultMaxTokenBytes bounds what the tokenizer buffers for one token (a tag, a text run,
	// an inline script). Inline JSON blobs of a few megabytes exist (Next.js pages); a token
	// beyond this ends the extraction with ErrTokenTooLong.
	DefaultMaxTokenBytes = 4 << 20
	// MaxHeadLinks is the number of typed head links one page may report; the rest are counted.
	MaxHeadLinks = 100
)

// ErrTokenTooLong is wrapped by Extract's error when one token of the page exceeded
// Options.MaxTokenBytes: the links found before it are reported, the rest of the page is not read.
var ErrTokenTooLong = errors.New("links: a token of the page is longer than MaxTokenBytes; the rest of the page was not read")

// Options bounds an extraction. The zero value means the defaults.
type Options struct {
	MaxLinks      int // 0 means DefaultMaxLinks
	MaxAttrBytes  int // 0 means DefaultMaxAttrBytes
	MaxTokenBytes int // 0 means DefaultMaxTokenBytes
}

// Link is a link of the page a crawler may follow.
type Link struct {
	// URL is absolute, http or https, without fragment and without userinfo.
	URL *url.URL
	// Nofollow is true when the element says rel=nofollow, or a robots meta with nofollow (or
	// none) came earlier in the page. A crawler does not follow it.
	Nofollow bool
}

// Rel is a link relation of a typed head link.
type Rel string

// The head link relations reported.
const (
	RelAlternate    Rel = "alternate"          // feeds and other representations (RSS, Atom, JSON)
	RelSitemap      Rel = "sitemap"            // a sitemap the page declares
	RelWordPressAPI Rel = "https://api.w.org/" // the WordPress REST API root
	RelAPICatalog   Rel = "api-catalog"        // an API catalog (RFC 9727)
)

// HeadLink is a <link> element of a relation in [Rel]. An element with several of them
// (rel="alternate sitemap") is reported once for each.
type HeadLink struct {
	Rel   Rel
	URL   *url.URL // absolute, http or https, without fragment and userinfo
	Type  string   // the type attribute, e.g. "application/rss+xml"; "" when absent
	Title string   // the title attribute, cut at MaxAttrBytes
}

// Summary is what Extract learnt of the page besides its links.
type Summary struct {
	// Base is the URL relative links were resolved against: the page's, or the first
	// <base href> (HTML: only the first counts).
	Base *url.URL
	// Nofollow is true when a robots meta said nofollow or none. Links reported before it
	// (a meta outside the head, where HTML puts it) do not carry it.
	Nofollow bool
	// Links counts the links reported to found.
	Links int
	// OverLimit counts the <a href> and <area href> beyond MaxLinks: found, not resolved, not reported.
	OverLimit int
	// Unusable counts hrefs that do not resolve to an http(s) URL with a host (mailto:,
	// javascript:, tel:, unparsable ones).
	Unusable int
	// TooLong counts href values longer than MaxAttrBytes; they are skipped.
	TooLong int
	// Head lists the typed head links, at most MaxHeadLinks.
	Head []HeadLink
	// HeadOverLimit counts typed head links beyond MaxHeadLinks.
	HeadOverLimit int
}

// Extract reads the HTML page at page from r and calls found (if not nil) for each link, in
// document order, as the tokenizer meets it; each Link's URL is a new value found may keep.
// It returns when r is exhausted. The error is nil at the end of the page; otherwise r's error
// (a body cut by the door's cap, a cancelled request) or one wrapping [ErrTokenTooLong] — the
// Summary then covers what was read. page must be an absolute http(s) URL; a page URL without
// a host yields no links.
func Extract(r io.Reader, page *url.URL, opts Options, found func(Link)) (Summary, error) {
	e := extractor{
		opts: Options{
			MaxLinks:      cmp.Or(opts.MaxLinks, DefaultMaxLinks),
			MaxAttrBytes:  cmp.Or(opts.MaxAttrBytes, DefaultMaxAttrBytes),
			MaxTokenBytes: cmp.Or(opts.MaxTokenBytes, DefaultMaxTokenBytes),
		},
		found: found,
	}
	if e.found == nil {
		e.found = func(Link) {}
	}
	e.s.Base = page
	z := html.NewTokenizer(r)
	z.SetMaxBuf(e.opts.MaxTokenBytes)
	for {
		switch z.Next() {
		case html.ErrorToken:
			err := z.Err()
			switch {
			case err == io.EOF:
				return e.s, nil
			case errors.Is(err, html.ErrBufferExceeded):
				return e.s, fmt.Errorf("%w (%d bytes)", ErrTokenTooLong, e.opts.MaxTokenBytes)
			}
			return e.s, err
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if hasAttr {
				e.tag(z, name)
			}
		}
	}
}

// extractor is the state of one Extract call.
type extractor struct {
	opts     Options
	found    func(Link)
	s        Summary
	baseSeen bool
}

// attrs holds the attribute values one element needs; the byte slices are the tokenizer's and
// valid until its next token.
type attrs struct {
	href, rel, name, content, typ, title []byte
	hrefTooLong                          bool
}

func (e *extractor) read(z *html.Tokenizer) attrs {
	var a attrs
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		var dst *[]byte
		switch string(k) {
		case "href":
			dst = &a.href
		case "rel":
			dst = &a.rel
		case "name":
			dst = &a.name
		case "content":
			dst = &a.content
		case "type":
			dst = &a.typ
		case "title":
			dst = &a.title
		default:
			continue
		}
		if *dst != nil {
			continue // HTML: the first of duplicate attributes wins
		}
		if len(v) > e.opts.MaxAttrBytes {
			if dst == &a.href {
				a.hrefTooLong = true
			}
			v = v[:e.opts.MaxAttrBytes]
		}
		if v == nil {
			v = []byte{}
		}
		*dst = v
	}
	return a
}

// tag handles one start tag with attributes.
func (e *extractor) tag(z *html.Tokenizer, name []byte) {
	switch string(name) {
	case "a", "area":
		if e.s.Links >= e.opts.MaxLinks {
			// Past the cap only count: the attribute scan is cheap, resolving is not.
			a := e.read(z)
			if a.href != nil {
				e.s.OverLimit++
			}
			return
		}
		a := e.read(z)
		switch {
		case a.href == nil:
		case a.hrefTooLong:
			e.s.TooLong++
		default:
			u, ok := resolve(e.s.Base, a.href)
			if !ok {
				e.s.Unusable++
				return
			}
			e.s.Links++
			e.found(Link{URL: u, Nofollow: e.s.Nofollow || hasToken(a.rel, "nofollow")})
		}
	case "base":
		a := e.read(z)
		if e.baseSeen || a.href == nil || a.hrefTooLong {
			return
		}
		e.baseSeen = true
		if u, ok := resolve(e.s.Base, a.href); ok {
			e.s.Base = u
		}
	case "meta":
		a := e.read(z)
		if strings.EqualFold(string(a.name), "robots") && Nofollow(string(a.content)) {
			e.s.Nofollow = true
		}
	case "link":
		a := e.read(z)
		if a.href == nil || a.rel == nil || a.hrefTooLong {
			return
		}
		var u *url.URL
		for _, tok := range bytes.Fields(a.rel) {
			rel, ok := headRel(tok)
			if !ok {
				continue
			}
			if u == nil {
				var usable bool
				if u, usable = resolve(e.s.Base, a.href); !usable {
					return
				}
			}
			if len(e.s.Head) >= MaxHeadLinks {
				e.s.HeadOverLimit++
				continue
			}
			e.s.Head = append(e.s.Head, HeadLink{Rel: rel, URL: u, Type: string(a.typ), Title: string(a.title)})
		}
	}
}

// headRel returns the relation tok names, if it is one reported; rel values compare ASCII
// case-insensitively (HTML "link types").
func headRel(tok []byte) (Rel, bool) {
	for _, r := range []Rel{RelAlternate, RelSitemap, RelWordPressAPI, RelAPICatalog} {
		if strings.EqualFold(string(tok), string(r)) {
			return r, true
		}
	}
	return "", false
}

// hasToken reports whether the space-separated list holds tok, ASCII case-insensitively.
func hasToken(list []byte, tok string) bool {
	for _, t := range bytes.Fields(list) {
		if strings.EqualFold(string(t), tok) {
			return true
		}
	}
	return false
}

// resolve turns an href into the absolute URL it points to, as a browser would: surrounding
// whitespace trimmed and tabs and newlines inside removed (WHATWG URL), resolved against base,
// then the fragment and any userinfo dropped. ok is false unless the result is http(s) with a host.
func resolve(base *url.URL, href []byte) (*url.URL, bool) {
	s := strings.TrimSpace(string(href))
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	ref, err := url.Parse(s)
	if err != nil || base == nil {
		return nil, false
	}
	u := base.ResolveReference(ref)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, false
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	return u, true
}
