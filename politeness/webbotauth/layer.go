package webbotauth

// This file decides when a request is signed: each time it is handed to the transport below.

import "net/http"

// Layer returns a transport that signs every request with s and passes it to next. Put it
// directly above the transport that talks to the network (the door puts it just above
// net/http.Transport, below the host clock), so that every request that actually goes out —
// pages, robots.txt, sitemaps, each redirect hop and each retry — carries a fresh signature with
// its own nonce and timestamps, and an answer from a cache above it signs nothing.
//
// With a nil s, Layer returns next unchanged: signing is off. The request passed in is never
// modified; a copy is signed.
func Layer(next http.RoundTripper, s *Signer) http.RoundTripper {
	if s == nil {
		return next
	}
	return &layer{next: next, signer: s}
}

type layer struct {
	next   http.RoundTripper
	signer *Signer
}

func (l *layer) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	if err := l.signer.Sign(out); err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, also on error
		}
		return nil, err
	}
	return l.next.RoundTrip(out)
}
