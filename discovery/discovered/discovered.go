// Package discovered decides which URLs a discovery source (a sitemap, an llms.txt, a feed, the
// WordPress REST API) may hand on, and in what form: one rule, so every source obeys the same one.
//
// A URL found in a file is kept when, once trimmed and resolved against the file's URL, it
//   - is http or https with a host,
//   - is at most [MaxLen] bytes long,
//   - lies inside the locations the caller allows (origins, or an origin and a directory).
//
// A kept URL has its host lower-cased and loses its fragment (a fragment is never sent to a server) and its userinfo (a
// discovered URL must never carry credentials into the frontier, the logs or a request). Every
// URL that is not kept is counted in [Dropped], by reason, so no loss is silent.
package discovered

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/politeness/origin"
)

// URL is one URL a source discovered and its last modification as the source states it.
type URL struct {
	// Loc is an absolute http(s) URL without fragment and without userinfo.
	Loc string
	// LastMod is when the source says the resource last changed; the zero time when the source
	// gives none, or gives one in a form the source's parser does not read.
	LastMod time.Time
}

// MaxLen is the longest URL kept, in bytes. sitemaps.org requires URLs shorter than 2,048
// characters, and a longer URL is refused by many servers; the same bound applies to every source.
const MaxLen = 2048

// Dropped counts the URLs a source found but did not hand on, by reason.
type Dropped struct {
	Invalid   int // not a URL, not http(s), or no host
	TooLong   int // longer than MaxLen
	OffScope  int // another origin, or outside the allowed directory
	OverLimit int // beyond the source's per-file cap
}

// Total is the number of URLs dropped for any reason.
func (d Dropped) Total() int { return d.Invalid + d.TooLong + d.OffScope + d.OverLimit }

// Errors [Filter.Clean] returns, for errors.Is.
var (
	ErrInvalid = errors.New("not an http(s) URL with a host")
	ErrTooLong = fmt.Errorf("longer than %d bytes", MaxLen)
)

// scope is where discovered URLs may point: one or more areas, each an origin (scheme, host and
// port, as RFC 9309 scopes robots.txt), optionally narrowed to a directory.
type scope []area

type area struct {
	origin string // origin.RobotsKey form
	dir    string // escaped path prefix ending in "/"; "/" for the whole origin
}

// newScope returns the scope covering each allowed location (see NewFilter).
func newScope(allowed []string) (scope, error) {
	var s scope
	for _, a := range allowed {
		u, err := url.Parse(strings.TrimSpace(a))
		if err != nil {
			return nil, fmt.Errorf("discovered: allowed location %q: %w", a, err)
		}
		key, err := origin.RobotsKey(u)
		if err != nil {
			return nil, fmt.Errorf("discovered: allowed location %q: %w", a, err)
		}
		dir := u.EscapedPath()
		dir = dir[:strings.LastIndexByte(dir, '/')+1]
		if dir == "" {
			dir = "/"
		}
		s = append(s, area{origin: key, dir: dir})
	}
	return s, nil
}

// OriginOf returns the origin of rawURL ("https://example.org"), as an allowed location for
// NewFilter.
func OriginOf(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	return origin.RobotsKey(u)
}

// contains reports whether u, whose origin key is key, lies inside s.
func (s scope) contains(key string, u *url.URL) bool {
	for _, a := range s {
		if a.origin != key {
			continue
		}
		if a.dir == "/" {
			return true
		}
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		if strings.HasPrefix(p, a.dir) {
			return true
		}
	}
	return false
}

// Filter applies the rule to the URLs found in one file and counts what it drops. Build one per
// file with [NewFilter]; it is not safe for concurrent use.
type Filter struct {
	base  *url.URL
	scope scope
	// Dropped counts what Keep refused so far.
	Dropped Dropped

	// One file's URLs nearly all share scheme and host; remembering the last origin key saves an
	// IDNA lookup per URL.
	lastScheme, lastHost, lastKey string
}

// NewFilter returns a filter for the URLs found in the file at fileURL (which relative references
// resolve against), keeping those inside the allowed locations. A location is an origin
// ("https://example.org"), which allows the whole origin, or a URL whose path ends in "/"
// ("https://example.org/shop/"), which allows that directory and below (sitemaps.org: a sitemap
// not named in robots.txt vouches only for its own directory); a path not ending in "/" is cut
// back to its directory. Empty locations are ignored; with none, the file's own origin is
// allowed.
func NewFilter(fileURL string, allowed ...string) (*Filter, error) {
	base, err := url.Parse(fileURL)
	if err != nil {
		return nil, fmt.Errorf("discovered: file URL %q: %w", fileURL, err)
	}
	own, err := origin.RobotsKey(base)
	if err != nil {
		return nil, fmt.Errorf("discovered: file URL %q: %w", fileURL, err)
	}
	var locations []string
	for _, a := range allowed {
		if strings.TrimSpace(a) != "" {
			locations = append(locations, a)
		}
	}
	if len(locations) == 0 {
		locations = []string{own}
	}
	s, err := newScope(locations)
	if err != nil {
		return nil, err
	}
	return &Filter{base: base, scope: s}, nil
}

// Keep returns ref in its kept form and true, or "" and false after counting why it was dropped.
// Most callers want Keep; Clean is for a caller that decides the scope itself.
func (f *Filter) Keep(ref string) (string, bool) {
	u, s, err := f.clean(ref)
	switch {
	case errors.Is(err, ErrTooLong):
		f.Dropped.TooLong++
		return "", false
	case err != nil:
		f.Dropped.Invalid++
		return "", false
	}
	if u.Scheme != f.lastScheme || u.Host != f.lastHost {
		key, err := origin.RobotsKey(u)
		if err != nil {
			f.Dropped.Invalid++
			return "", false
		}
		f.lastScheme, f.lastHost, f.lastKey = u.Scheme, u.Host, key
	}
	if !f.scope.contains(f.lastKey, u) {
		f.Dropped.OffScope++
		return "", false
	}
	return s, true
}

// Clean trims ref, resolves it against the file's URL and returns it without fragment and
// userinfo; it fails with [ErrInvalid] or [ErrTooLong]. It does not look at the scope.
func (f *Filter) Clean(ref string) (*url.URL, error) {
	u, _, err := f.clean(ref)
	return u, err
}

// clean is Clean that also returns the cleaned URL as a string, which it builds anyway.
func (f *Filter) clean(ref string) (*url.URL, string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, "", ErrInvalid
	}
	if len(ref) > MaxLen {
		return nil, "", ErrTooLong
	}
	r, err := url.Parse(ref)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	u := r
	if r.Scheme == "" || r.Host == "" || strings.Contains(r.Path, "/.") {
		// Most found URLs are absolute and clean; only the others pay for resolving (which
		// also removes dot segments, RFC 3986 §5.2).
		u = f.base.ResolveReference(r)
	}
	u.Host = strings.ToLower(strings.TrimSuffix(u.Host, ":")) // an empty port is the default one
	if sc := u.Scheme; (sc != "http" && sc != "https") || u.Hostname() == "" || u.Opaque != "" {
		return nil, "", ErrInvalid
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	s := u.String()
	if len(s) > MaxLen {
		return nil, "", ErrTooLong
	}
	return u, s, nil
}
