package politeness

import (
	"net/http"
	"strings"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// identityLayer sets exactly the policy's User-Agent (and From, when a contact is configured) on
// every request, whatever a callback, colly.Headers or extensions.RandomUserAgent set, and moves
// the private kind header into the request's context so it never leaves the process.
//
// It runs once per redirect hop: Go's client copies the original request's headers to each hop,
// not what a layer set, so nothing set on an earlier hop is relied on.
func identityLayer(next http.RoundTripper, p Policy) http.RoundTripper {
	agent := p.agent()
	from := p.Identity.From()
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		k := kind.Of(req)
		out := req.Clone(kind.WithKind(req.Context(), k))
		for name := range out.Header {
			if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Etiquette-") {
				out.Header.Del(name)
			}
		}
		out.Header.Set("User-Agent", agent)
		// RFC 9110 §10.1.2: a robot should send From with a contact address. Without a configured
		// contact, a From a callback set is removed rather than sent under our name.
		if from != "" {
			out.Header.Set("From", from)
		} else {
			out.Header.Del("From")
		}
		return next.RoundTrip(out)
	})
}

// roundTripperFunc lets a function be a layer.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
