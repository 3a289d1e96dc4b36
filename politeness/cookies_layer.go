package politeness

// This file decides which cookies go out and come back: none, or what a declared purpose keeps.

import (
	"net/http"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/politeness/events"
)

// cookieLayer keeps the door stateless unless a purpose jar exists. Going down it removes every
// Cookie header — one from colly.Headers, a callback, a queued request or a jar that Colly's
// SetStorage/SetCookieJar put back on the client — and adds only what jar holds for this exact
// origin. Coming up, jar sees the response's Set-Cookie headers first (it files them through its
// purpose filter), then the headers are removed, so no jar above the door ever receives one.
func cookieLayer(next http.RoundTripper, jar *cookies.Jar, sink events.Sink) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if len(req.Header.Values("Cookie")) > 0 || jar != nil {
			req = req.Clone(req.Context())
			req.Header.Del("Cookie")
			if jar != nil {
				for _, c := range jar.Cookies(req.URL) {
					req.AddCookie(c)
				}
			}
		}
		resp, err := next.RoundTrip(req)
		if resp != nil && len(resp.Header.Values("Set-Cookie")) > 0 {
			if jar != nil {
				jar.SetCookies(req.URL, resp.Cookies())
			} else {
				for _, c := range resp.Cookies() {
					sink.Emit(events.Event{Type: events.Notice, URL: req.URL.String(), Reason: cookieRefused, Detail: cookies.Classify(c.Name).String() + ": " + c.Name})
				}
			}
			resp.Header.Del("Set-Cookie")
		}
		return resp, err
	})
}

// cookieRefused is the Notice reason of a cookie the door did not keep; Detail is
// "<category>: <name>" (without a purpose every cookie is refused, and counted by its category).
const cookieRefused = "cookie-refused"
