package politeness

// This file decides which cookies go out and come back: none, or what a declared purpose keeps.

import (
	"net/http"
	"strings"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/politeness/events"
)

// cookieDoor is the door's cookie handling, in two layers that share the purpose jar (nil:
// stateless) and the warnings' memory of what was refused per origin.
type cookieDoor struct {
	jar   *cookies.Jar
	sink  events.Sink
	trail *cookieTrail
}

func newCookieDoor(jar *cookies.Jar, sink events.Sink) *cookieDoor {
	return &cookieDoor{jar: jar, sink: sink, trail: newCookieTrail(sink)}
}

// requests is the layer above the cache: it decides the Cookie header, so that the cache sees the
// header that goes out (a Vary: Cookie compares that one). Going down it removes every Cookie
// header — one from colly.Headers, a callback, a queued request or a jar that Colly's
// SetStorage/SetCookieJar put back on the client — except the cookies in it the purpose keeps for
// this exact origin, and adds what the jar holds for it (the jar's value wins over the header's).
// A dropped header cookie is a warning, once per origin, naming the Policy field that keeps it.
func (cd *cookieDoor) requests(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if len(req.Header.Values("Cookie")) == 0 && cd.jar == nil {
			return next.RoundTrip(req)
		}
		sent := req.Cookies()
		raw := len(req.Header.Values("Cookie")) > 0
		req = req.Clone(req.Context())
		req.Header.Del("Cookie")
		held := cd.jar.Cookies(req.URL)
		for _, c := range held {
			req.AddCookie(c)
		}
		var dropped []string
		for _, c := range sent {
			if !cd.jar.Keeps(req.URL, c.Name) {
				dropped = append(dropped, c.Name)
			} else if !hasCookie(held, c.Name) {
				req.AddCookie(c)
			}
		}
		if raw && len(sent) == 0 {
			dropped = append(dropped, "(an unreadable Cookie header)")
		}
		if len(dropped) > 0 {
			cd.trail.headerDropped(req.URL, dropped)
		}
		return next.RoundTrip(req)
	})
}

func hasCookie(cs []*http.Cookie, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// responses is the layer just below backoff, so that it sees every answer the site sent — a 304
// the cache turns into its stored 200, a 429 that backoff retries — and no Set-Cookie reaches the
// cache or anything above. Coming up, a redirect from an origin where cookies were refused before
// is a warning (once per origin: a failed login or session looks like this); then the jar files
// the Set-Cookie lines through its purpose filter (without one, every cookie is refused), each
// refusal is a Notice counted by category, a line net/http cannot parse is refused as
// "malformed", and the lines are removed.
func (cd *cookieDoor) responses(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if resp == nil {
			return resp, err
		}
		if isRedirect(resp) {
			cd.trail.redirected(req.URL)
		}
		lines := resp.Header.Values("Set-Cookie")
		if len(lines) == 0 {
			return resp, err
		}
		var parsed []*http.Cookie
		var refused []cookies.Refusal
		for _, line := range lines {
			c, perr := http.ParseSetCookie(line)
			if perr != nil {
				refused = append(refused, cookies.Refusal{Name: malformedName(line), Reason: cookieMalformed})
				continue
			}
			parsed = append(parsed, c)
		}
		if cd.jar != nil {
			refused = append(refused, cd.jar.Store(req.URL, parsed)...)
		} else {
			for _, c := range parsed {
				m := cookies.Lookup(c.Name)
				refused = append(refused, cookies.Refusal{Name: c.Name, Reason: m.Category.String(), Match: m})
			}
		}
		for _, r := range refused {
			cd.sink.Emit(events.Event{Type: events.Notice, URL: req.URL.String(), Reason: cookieRefused, Detail: r.Reason + ": " + r.Name})
		}
		cd.trail.refused(req.URL, refused)
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			cd.trail.formAnswered(req.URL, req.Method)
		}
		resp.Header.Del("Set-Cookie")
		return resp, err
	})
}

// isRedirect reports a redirect the client follows: 301, 302, 303, 307 or 308 with a Location
// (not a 304, which is the cache's).
func isRedirect(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return resp.Header.Get("Location") != ""
	}
	return false
}

// malformedName is the name part of a Set-Cookie line net/http refused, for the Notice: the text
// before the first "=" or ";", cut to 64 bytes, or "?" when that is empty or not printable ASCII.
func malformedName(line string) string {
	name, _, _ := strings.Cut(line, ";")
	name, _, _ = strings.Cut(name, "=")
	name = strings.TrimSpace(name)
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" || strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		return "?"
	}
	return name
}

// cookieRefused is the Notice reason of a cookie the door did not keep; Detail is
// "<category or reason>: <name>" (without a purpose every cookie is refused, and counted by its
// category; see cookies.Refusal for the other reasons).
const cookieRefused = "cookie-refused"

// cookieMalformed is the refusal reason of a Set-Cookie line net/http cannot parse (a value with
// a quote or a backslash inside, a name that is not a token): such a cookie cannot be kept, and is
// counted rather than lost without a trace.
const cookieMalformed = "malformed"

// The Notice reasons of the cookie warnings, logged at Warn: a redirect after a refusal on the
// origin, and a Cookie header from the caller that was not sent.
const (
	cookieNeeded        = "cookie-needed"
	cookieHeaderDropped = "cookie-header-dropped"
)
