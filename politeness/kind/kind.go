// Package kind names what a request is for (robots.txt, a sitemap, a page, …), so that the layers of
// the door can treat kinds differently: the cache always revalidates robots.txt and sitemaps, the
// body caps differ per kind, and the event stream reports it.
//
// A request's kind travels in its context. Colly derives every request's context from the
// collector's, which a callback cannot extend per request, so from Colly callbacks the kind is set
// as the private header [Header]; the door's identity layer moves it into the context and removes
// it before anything leaves the process.
package kind

import (
	"context"
	"net/http"
	"strings"
)

// Kind is what a request is for. The zero value means "not said" and reads as [HTML].
type Kind string

// The kinds the project distinguishes.
const (
	Robots  Kind = "robots"
	Sitemap Kind = "sitemap"
	LLMs    Kind = "llms"
	Feed    Kind = "feed"
	API     Kind = "api"
	HTML    Kind = "html"
	Other   Kind = "other"
)

// Header is the private request header that carries a kind from a Colly callback to the door.
// The door strips it; it never reaches a server.
// SitemapMaxBytes is the most a sitemap may hold once decompressed: sitemaps.org's 50 MB
// (52,428,800 bytes). It is both the door's body cap for kind Sitemap and the sitemap reader's
// file limit (discovery/sitemap), one figure for the response and the file.
const SitemapMaxBytes = 50 << 20

const Header = "X-Etiquette-Kind"

// Parse returns the kind named by s (case-insensitive) and whether s named one.
func Parse(s string) (Kind, bool) {
	s = strings.TrimSpace(s)
	for _, k := range []Kind{Robots, Sitemap, LLMs, Feed, API, HTML, Other} {
		if strings.EqualFold(string(k), s) {
			return k, true
		}
	}
	return "", false
}

// Accept returns the Accept header (RFC 9110 §12.5.1) a request of kind k sends when its caller
// chose none: the media types the kind is published in, most likely first, and */* at a low
// weight so that a site serving an unexpected type still answers rather than sending 406.
func (k Kind) Accept() string {
	switch k {
	case Robots:
		return "text/plain,*/*;q=0.1"
	case Sitemap:
		return "application/xml,text/xml;q=0.9,application/gzip;q=0.8,text/plain;q=0.5,*/*;q=0.1"
	case LLMs:
		return "text/markdown,text/plain;q=0.9,*/*;q=0.1"
	case Feed:
		return "application/rss+xml,application/atom+xml,application/feed+json,application/xml;q=0.9,*/*;q=0.1"
	case API:
		return "application/json,*/*;q=0.1"
	case Other:
		return "*/*"
	}
	return "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"
}

type ctxKey struct{}

// WithKind returns a copy of ctx that carries k.
func WithKind(ctx context.Context, k Kind) context.Context {
	return context.WithValue(ctx, ctxKey{}, boxed(k))
}

// boxed returns k as an interface value. The named kinds are returned from their constants, which
// Go converts without allocating: the door marks every request with its kind.
func boxed(k Kind) any {
	switch k {
	case Robots:
		return Robots
	case Sitemap:
		return Sitemap
	case LLMs:
		return LLMs
	case Feed:
		return Feed
	case API:
		return API
	case HTML:
		return HTML
	case Other:
		return Other
	}
	return k
}

// FromContext returns the kind ctx carries, or [HTML] when it carries none.
func FromContext(ctx context.Context) Kind {
	if k, ok := ctx.Value(ctxKey{}).(Kind); ok && k != "" {
		return k
	}
	return HTML
}

// Of returns the kind of req: the one in its context, else the one in its [Header], else [HTML].
func Of(req *http.Request) Kind {
	if k, ok := req.Context().Value(ctxKey{}).(Kind); ok && k != "" {
		return k
	}
	if k, ok := Parse(req.Header.Get(Header)); ok {
		return k
	}
	return HTML
}

// Mark sets the kind on a request that is about to be sent, through its context when the caller
// builds the request itself. It returns the new request (a shallow copy, as [http.Request.WithContext]).
func Mark(req *http.Request, k Kind) *http.Request {
	return req.WithContext(WithKind(req.Context(), k))
}
