package cache

// This file handles the requests the cache does not answer: they are forwarded, and a successful
// unsafe one removes what is stored for the URLs it changed (RFC 9111 §4.4).

import (
	"net/http"
	"net/url"
)

// pass forwards a request the cache does not take part in.
func (t *Transport) pass(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Header.Del(StatusHeader)
	resp.Header.Del(ReasonHeader)
	return resp, nil
}

// passUnsafe forwards a request with another method and, after a successful unsafe one,
// invalidates what is stored for its URL and for same-origin Location / Content-Location.
func (t *Transport) passUnsafe(req *http.Request) (*http.Response, error) {
	resp, err := t.pass(req)
	if err != nil {
		return nil, err
	}
	switch req.Method {
	case http.MethodOptions, http.MethodTrace:
		return resp, nil
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		t.invalidate(req.URL)
		for _, n := range []string{"Location", "Content-Location"} {
			if v := resp.Header.Get(n); v != "" {
				if u, err := req.URL.Parse(v); err == nil && u.Scheme == req.URL.Scheme && u.Host == req.URL.Host {
					t.invalidate(u)
				}
			}
		}
	}
	return resp, nil
}

// invalidate removes the stored response for u; removing a Vary index makes its variants
// unreachable (a later index gets a new generation).
func (t *Transport) invalidate(u *url.URL) {
	if err := t.store.Delete(primaryKey(u)); err != nil {
		t.log.Debug("cache: invalidation failed", "url", u.String(), "err", err)
	}
}
