package cache

// This file decides whether a response may be stored (RFC 9111 §3) and which of its fields are.

import (
	"net/http"
	"slices"

	"github.com/politecrawl/etiquette/politeness/freshness"
)

// storable decides RFC 9111 §3 for a response to req, with one refusal of the crawler's own: a
// response that varies on a credential (isCredential).
func storable(req *http.Request, resp *http.Response) bool {
	if req.Method != http.MethodGet || !understoodStatus(resp.StatusCode) {
		return false
	}
	if freshness.CacheControl(req.Header).Has("no-store") {
		return false
	}
	cc := freshness.CacheControl(resp.Header)
	// must-understand lets a cache that understands the status ignore no-store (§5.2.2.3).
	if cc.Has("no-store") && !(cc.Has("must-understand") && freshness.HeuristicStatus(resp.StatusCode)) {
		return false
	}
	names, star := varyFields(resp.Header)
	if star || slices.ContainsFunc(names, isCredential) {
		return false
	}
	if freshness.HeuristicStatus(resp.StatusCode) || cc.Has("public") || cc.Has("private") {
		return true
	}
	if _, ok := cc.Seconds("max-age"); ok {
		return true
	}
	return len(resp.Header.Values("Expires")) > 0
}

// understoodStatus are the final status codes the cache may store with explicit freshness.
func understoodStatus(code int) bool {
	return code >= 200 && code < 600 && code != http.StatusPartialContent && code != http.StatusNotModified
}

// isCredential reports whether a request field carries a credential. A response that varies on
// one is not stored: its key and vary record would hold the credential's value — for Cookie, the
// session cookie the door's cookie layer added above the cache — and write it to the store.
func isCredential(field string) bool {
	return field == "Cookie" || field == "Authorization" || field == "Proxy-Authorization"
}

// hopByHop are the fields a cache must not store (RFC 9111 §3.1, RFC 9110 §7.6.1).
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Transfer-Encoding",
	"Upgrade", "Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Authorization", "Trailer"}

// storedFields returns the fields of h that are stored: all but the hop-by-hop fields, the fields
// a qualified no-cache names, the cache's own status field, and Options.OmitHeaders.
func (t *Transport) storedFields(h http.Header) http.Header {
	s := h.Clone()
	for _, line := range h.Values("Connection") {
		for _, n := range freshness.SplitList(line) {
			s.Del(n)
		}
	}
	for _, n := range hopByHop {
		s.Del(n)
	}
	// Fields named by a qualified no-cache may not be reused without revalidation (§5.2.2.4);
	// not storing them is the simplest way to honour that.
	for _, n := range freshness.CacheControl(h).Fields("no-cache") {
		s.Del(n)
	}
	s.Del(StatusHeader)
	s.Del(ReasonHeader)
	for _, n := range t.o.OmitHeaders {
		s.Del(n)
	}
	return s
}
