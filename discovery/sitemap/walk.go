package sitemap

// This file decides which sitemap file of an origin is read next, and which never.

import (
	"net/url"
	"strings"
)

// Defaults for [Walk].
const (
	// DefaultMaxDepth: a file named in robots.txt is at depth 1, a file its index lists at 2, a
	// file that one lists at 3. sitemaps.org forbids nesting indexes, so depth 2 is the legal
	// maximum; one more level tolerates a common mistake.
	DefaultMaxDepth = 3
	// DefaultMaxFiles: one index may list 50,000 sitemaps (sitemaps.org).
	DefaultMaxFiles = 50_000
)

// Walk is the set of sitemap files met while discovering one origin. It hands each file out once,
// in the order met, and none deeper than MaxDepth, so an index that lists itself, or a loop of
// indexes, ends.
//
// Add the Sitemap lines of robots.txt at depth 1, and each URL an [Index] yields (see
// [File.Each]) at the index's depth + 1; call Next when the origin's queue runs low, so the next
// file is fetched only when needed. Every file read must have come through Add, or its own URL
// is not known to be visited. The zero Walk is ready to use with the defaults. A Walk is not safe
// for concurrent use.
type Walk struct {
	// MaxDepth is the deepest file Add accepts; 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxFiles is the number of distinct files Add accepts; 0 means DefaultMaxFiles.
	MaxFiles int
	// Refused counts what Add turned away, by reason.
	Refused WalkRefusals

	seen  map[string]struct{}
	queue []Pending
}

// WalkRefusals counts the files a [Walk] refused.
type WalkRefusals struct {
	Repeated  int // already met (a loop, an index listing itself, a duplicate)
	TooDeep   int // deeper than MaxDepth
	OverLimit int // past MaxFiles
	Invalid   int // not an http(s) URL
}

// Pending is a sitemap file waiting to be fetched.
type Pending struct {
	URL   string
	Depth int
}

// Add queues the file at rawURL, met at depth, and reports whether it was new and accepted.
// URLs differing only in fragment, userinfo or the case of scheme and host are one file.
func (w *Walk) Add(rawURL string, depth int) bool {
	key, ok := walkKey(rawURL)
	switch {
	case !ok:
		w.Refused.Invalid++
		return false
	case depth > w.maxDepth():
		w.Refused.TooDeep++
		return false
	}
	if _, dup := w.seen[key]; dup {
		w.Refused.Repeated++
		return false
	}
	if len(w.seen) >= w.maxFiles() {
		w.Refused.OverLimit++
		return false
	}
	if w.seen == nil {
		w.seen = make(map[string]struct{})
	}
	w.seen[key] = struct{}{}
	w.queue = append(w.queue, Pending{URL: key, Depth: depth})
	return true
}

// Next removes and returns the file to fetch next, oldest first; false when none is waiting.
func (w *Walk) Next() (Pending, bool) {
	if len(w.queue) == 0 {
		return Pending{}, false
	}
	p := w.queue[0]
	w.queue = w.queue[1:]
	return p, true
}

// Len is the number of files waiting.
func (w *Walk) Len() int { return len(w.queue) }

func (w *Walk) maxDepth() int {
	if w.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return w.MaxDepth
}

func (w *Walk) maxFiles() int {
	if w.MaxFiles <= 0 {
		return DefaultMaxFiles
	}
	return w.MaxFiles
}

// walkKey is rawURL as the one form a file is known by: no fragment, no userinfo, scheme and host
// lower-cased.
func walkKey(rawURL string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	u.Host = strings.ToLower(u.Host)
	return u.String(), true
}
