// Package demosite is the site `etiquette demo` crawls: four origins on loopback, built with the
// recording test site of package etiquettetest, whose pages come from Markdown files embedded in
// the binary (the content folder). No request leaves the machine.
//
// Between them the origins show every behaviour the door has an answer to:
//
//   - the blog: a robots.txt with a group for every crawler and one for EtiquetteDemoBot, a
//     Disallow that blocks a linked draft, and a Sitemap: line to a sitemap index that points at a
//     gzipped sitemap; llms.txt; an RSS feed linked from the home page with rel=alternate; a
//     WordPress REST API listing, advertised on every page with the Link header WordPress sends
//     (rel="https://api.w.org/"); an analytics and a consent cookie on every page;
//   - the shop: its first request for /products is answered 429 with Retry-After: 2; /help
//     redirects to the docs origin; a session and an analytics cookie on every page; /cart and
//     /checkout disallowed;
//   - the docs: the target of the redirect, llms.txt, and the page the demo identity links to;
//   - the archive: its robots.txt answers 503 with Retry-After: 1, so the whole origin is
//     disallowed (RFC 9309 §2.3.1.4).
//
// Every page, robots.txt, sitemap, feed and llms.txt carries an ETag and a Last-Modified, so a
// second crawl that kept a cache is answered 304 Not Modified. Every HTML page links its
// Markdown source with rel=alternate (type text/markdown, the page's URL with ".md" appended, as
// llms.txt proposes). An origin holds 6 to 12 pages, so a crawl at 3 starts per second per origin
// ends in well under half a minute.
package demosite

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/politeness/identity"
)

// Site is the running demo site: the test kit's site (its recording tells what the crawl sent:
// Requests, Mark, Since), the origins, where a crawl starts, and who the demo crawls as. Close
// it when done. Make one with [Start]; the zero Site is not usable.
type Site struct {
	*etiquettetest.Site

	Blog, Shop, Docs, Archive *etiquettetest.Origin

	// StartURLs are the origins' home pages, in the order above: a crawl of them reaches every
	// page through links, sitemaps, feeds and llms.txt.
	StartURLs []string
	// Identity is the demo crawler: token EtiquetteDemoBot, version 1.0, the info URL of a page
	// on the docs origin, contact demo@example.invalid. It is valid for the door, and only for
	// this site; print [IdentityNote] with it.
	Identity identity.Identity
}

// Token is the demo crawler's product token, as the blog's robots.txt names it.
const Token = "EtiquetteDemoBot"

// IdentityNote is what a program that crawls as the demo identity should print beside it.
const IdentityNote = "the demo crawls as " + Token + ", an identity that only fits this demo site; a real crawl needs your own identity (--token, --bot-version, --info-url, --contact)"

// About says, in two sentences, what each origin of the demo site shows; a report of the demo
// opens with it (report.Options.About).
const About = "The demo site runs four origins on loopback ports: " +
	"the blog has a robots.txt with a group for this crawler that disallows its drafts and admin pages, " +
	"a sitemap index pointing at a gzipped sitemap, llms.txt, an RSS feed and a WordPress-style API, " +
	"and sets analytics and consent cookies; the shop answers its first request for /products " +
	"with 429 and Retry-After: 2, redirects /help to the docs, disallows /cart and /checkout and sets session and analytics cookies. " +
	"The docs are the target of that cross-origin redirect and have llms.txt and a sitemap, " +
	"and the archive's robots.txt answers 503 with Retry-After: 1, so none of its pages may be fetched (RFC 9309 §2.3.1.4); " +
	"every document carries an ETag and a Last-Modified, so a second pass through the cache is answered 304 Not Modified."

// Labels names the origins by what they show, keyed by their budget keys (host:port): "blog",
// "shop", "docs" and "archive", for a report (report.Options.Labels) and the progress line.
func (s *Site) Labels() map[string]string {
	return map[string]string{s.Blog.Addr(): "blog", s.Shop.Addr(): "shop", s.Docs.Addr(): "docs", s.Archive.Addr(): "archive"}
}

// ErrNoLoopback is returned by [Start] when the machine gives it no loopback port.
var ErrNoLoopback = errors.New("demosite: cannot listen on a loopback port")

// Start starts the demo site's origins on loopback ports and returns it. It fails only when no
// loopback port can be opened (ErrNoLoopback) or, in a broken build, when the embedded content
// is unusable.
func Start() (s *Site, err error) {
	s = &Site{Site: etiquettetest.NewSite()}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := s.openOrigins(); err != nil {
		return nil, err
	}
	b := bases{Blog: s.Blog.URL, Shop: s.Shop.URL, Docs: s.Docs.URL, Archive: s.Archive.URL}
	for _, o := range []*etiquettetest.Origin{s.Blog, s.Shop, s.Docs, s.Archive} {
		// What is not there (an llms.txt, a guessed sitemap) may be remembered for an hour, so
		// a second pass through the cache does not ask again.
		o.Otherwise(etiquettetest.Status(http.StatusNotFound).Header("Cache-Control", "max-age=3600"))
	}
	for _, build := range []func(bases) error{s.buildBlog, s.buildShop, s.buildDocs, s.buildArchive} {
		if err := build(b); err != nil {
			return nil, err
		}
	}
	s.StartURLs = []string{s.Blog.URL + "/", s.Shop.URL + "/", s.Docs.URL + "/", s.Archive.URL + "/"}
	s.Identity = identity.Identity{Profile: identity.Generic, Token: Token, Version: "1.0",
		InfoURL: s.Docs.URL + "/bot", Contact: "demo@example.invalid"}
	return s, nil
}

// openOrigins opens the four origins. The kit panics, as httptest does, when no loopback port can
// be opened; a demo should say so and exit instead.
func (s *Site) openOrigins() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrNoLoopback, r)
		}
	}()
	s.Blog, s.Shop, s.Docs, s.Archive = s.NewOrigin(), s.NewOrigin(), s.NewOrigin(), s.NewOrigin()
	return nil
}
