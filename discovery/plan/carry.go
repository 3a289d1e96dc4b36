package plan

// This file decides when a page's rel=alternate link is the page's content in a form the
// planner reads (JSON or Markdown), and when it is something else: a feed, an oEmbed card, a
// translation, another page.

import (
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/politecrawl/etiquette/discovery/links"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// contentTypes are the media types of an alternate that can carry a page's content: Markdown
// (RFC 7763; text/x-markdown is its older, common spelling) and plain JSON. A suffixed type is
// not among them: application/json+oembed is an embedding card, application/feed+json a feed.
var contentTypes = map[string]bool{"text/markdown": true, "text/x-markdown": true, "application/json": true}

// representationExts are the file extensions by which one resource's representations differ
// in their URLs ("/docs/a", "/docs/a.md", "/docs/a.json", "/docs/a.html").
var representationExts = map[string]bool{".md": true, ".markdown": true, ".json": true, ".html": true, ".htm": true}

// carries reports whether the typed link l, found on page (its final URL), is an alternate that
// carries the page's content, so that it can stand in for the page's HTML. It does when all of
// these hold:
//
//   - l is rel=alternate, advertised by the page itself (its <head> or its Link header);
//   - l's type is Markdown (text/markdown, text/x-markdown) or plain JSON (application/json) —
//     not a feed (application/rss+xml, application/feed+json: read as listings), not an oEmbed
//     card (application/json+oembed), not HTML (a translation is another page);
//   - l is on the page's origin, with the page's query, and the same canonical path: the paths
//     are equal once a final representation extension (.md, .markdown, .json, .html, .htm) is
//     removed and a trailing "/" reads as "/index" — "/docs/a" and "/docs/a.md", "/" and
//     "/index.md", "/docs/a/" and "/docs/a.json" are one page; "/" and
//     "/wp-json/wp/v2/pages/2" are not (WordPress's per-page JSON is an API record, not the
//     page's content as published).
func carries(page *url.URL, l links.HeadLink) bool {
	if page == nil || l.URL == nil || l.Rel != links.RelAlternate {
		return false
	}
	mt, _, err := mime.ParseMediaType(l.Type)
	if err != nil || !contentTypes[mt] {
		return false
	}
	pk, err1 := origin.RobotsKey(page)
	ak, err2 := origin.RobotsKey(l.URL)
	if err1 != nil || err2 != nil || pk != ak || page.RawQuery != l.URL.RawQuery {
		return false
	}
	alt := canonicalPath(l.URL.Path)
	for _, p := range pageCanonicalPaths(page.Path) {
		if p == alt {
			return true
		}
	}
	return false
}

// canonicalPath is p without a final representation extension, with a trailing "/" read as
// "/index".
func canonicalPath(p string) string {
	if p == "" || strings.HasSuffix(p, "/") {
		return p + "index"
	}
	if ext := path.Ext(p); representationExts[strings.ToLower(ext)] {
		return strings.TrimSuffix(p, ext)
	}
	return p
}

// pageCanonicalPaths are the canonical paths a page at p answers to: "/docs/a/" is both
// "/docs/a/index" and "/docs/a", since sites publish its Markdown as either.
func pageCanonicalPaths(p string) []string {
	c := canonicalPath(p)
	if dir, ok := strings.CutSuffix(p, "/"); ok && dir != "" {
		return []string{c, dir}
	}
	return []string{c}
}
