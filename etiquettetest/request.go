// This file decides what the site remembers of one request: the request as it arrived and what
// the site answered.

package etiquettetest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Request is one request as an origin's server saw it, and what the origin answered.
// A Request is a copy: changing it does not change the site's recording.
type Request struct {
	// At is when the request arrived: when the origin started handling it.
	At time.Time
	// Done is when the origin began writing the last part of its answer, so no client can have
	// had the whole answer earlier. Zero while the request is still being answered.
	Done time.Time
	// Origin is the scheme, host and port that received the request: "http://127.0.0.1:40123".
	Origin string
	// RemoteAddr is the client's address and port; requests sent on one connection share it.
	RemoteAddr string
	// Method is the request method.
	Method string
	// Target is the path and query as sent: "/search?q=x".
	Target string
	// Header holds every request header, including Host.
	Header http.Header
	// Status is the status the origin answered. It is 0 while the request is being answered, and
	// when no answer was sent: the client went away or the site closed first.
	Status int
	// Answer holds the headers the origin answered with (Retry-After, ETag, Set-Cookie, …);
	// nil until the answer is written.
	Answer http.Header
	// BodyBytes is the number of body bytes the origin wrote in its answer, as sent (a gzipped
	// file counts compressed): what the answer cost the site. It is 0 for a 304, an answer to
	// HEAD, a request not yet answered, and one that got no answer.
	BodyBytes int64
	// WellKnown lists the absolute URLs under /.well-known/ that the answer mentioned, in its
	// body or in a Location or Link header: the ones the site itself points crawlers to.
	WellKnown []string
}

// Path is the request's path without the query, as sent (still percent-encoded).
func (r Request) Path() string {
	p, _, _ := strings.Cut(r.Target, "?")
	return p
}

// Paths lists the paths and queries of reqs, in their order: a recording at a glance.
func Paths(reqs []Request) []string {
	out := make([]string, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, r.Target)
	}
	return out
}

// NotModified reports whether the origin answered 304 Not Modified.
func (r Request) NotModified() bool { return r.Status == http.StatusNotModified }

// HostPort is the host and port of the origin that received the request: the key under which a
// site operator counts a crawler's load.
func (r Request) HostPort() string {
	u, err := url.Parse(r.Origin)
	if err != nil {
		return r.Origin
	}
	return u.Host
}

// String is the request as one log line an operator would quote:
// "15:04:05.123 http://127.0.0.1:40123 GET /page".
func (r Request) String() string {
	return fmt.Sprintf("%s %s %s %s", r.At.Format("15:04:05.000"), r.Origin, r.Method, r.Target)
}

func (r Request) clone() Request {
	r.Header = r.Header.Clone()
	r.Answer = r.Answer.Clone()
	r.WellKnown = append([]string(nil), r.WellKnown...)
	return r
}

// wellKnownPrefix is the path prefix of RFC 8615 well-known URIs.
const wellKnownPrefix = "/.well-known/"

// wellKnownMentions returns the /.well-known/ URLs that text mentions, resolved against base.
// A mention is the run of URL characters around "/.well-known/": an absolute URL
// ("https://host/.well-known/x") or a root-relative path ("/.well-known/x"), as links in HTML,
// XML, JSON, robots.txt and plain text write them. Query and fragment are dropped.
func wellKnownMentions(base *url.URL, text string) []string {
	var out []string
	for i := 0; ; {
		j := strings.Index(text[i:], wellKnownPrefix)
		if j < 0 {
			return out
		}
		at := i + j
		start := at
		for start > 0 && isURLByte(text[start-1]) {
			start--
		}
		end := at + len(wellKnownPrefix)
		for end < len(text) && isURLByte(text[end]) {
			end++
		}
		i = at + len(wellKnownPrefix)
		// The run may have swallowed what precedes an unquoted link (href=/.well-known/x); the
		// root-relative part alone is then the mention.
		for _, candidate := range []string{text[start:end], text[at:end]} {
			if u, ok := resolveWellKnown(base, candidate); ok {
				out = append(out, u)
				break
			}
		}
	}
}

func resolveWellKnown(base *url.URL, ref string) (string, bool) {
	r, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	u := base.ResolveReference(r)
	if !strings.HasPrefix(u.EscapedPath(), wellKnownPrefix) {
		return "", false
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String(), true
}

// isURLByte reports whether b may be part of a URL written in markup: anything but space,
// controls, quotes, angle brackets, parentheses and the separators around links in the formats
// the site serves.
func isURLByte(b byte) bool {
	if b <= ' ' || b >= 0x7f {
		return false
	}
	return !strings.ContainsRune(`"'<>()[]{}|\^`+"`,;", rune(b))
}
