package cache

// This file decides which stored response answers a request: the cache key (RFC 9111 §2) and the
// Vary match (RFC 9111 §4.1).

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/freshness"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// primaryKey is the cache key of a GET for u (RFC 9111 §2): the URI without its fragment.
func primaryKey(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return "GET " + c.String()
}

// variantKey is the key of the variant of primary (under Vary index generation) that a request
// with header h selects by the Vary fields names.
func variantKey(primary, generation string, names []string, h http.Header) string {
	var b strings.Builder
	b.WriteString(primary)
	b.WriteString("\x00")
	b.WriteString(generation)
	for _, n := range names {
		b.WriteString("\x00")
		b.WriteString(n)
		b.WriteString("=")
		b.WriteString(varyValue(h, n))
	}
	return b.String()
}

// lookup finds a stored response whose Vary fields match req (RFC 9111 §4.1). It returns the key
// the response was found under (for updating it) and its body, or a nil entry.
func (t *Transport) lookup(req *http.Request) (string, *Entry, io.ReadCloser) {
	key := primaryKey(req.URL)
	e, body, err := t.store.Get(key)
	if err != nil {
		t.logGetError(req, key, err)
		return key, nil, nil
	}
	if e.Status == 0 {
		body.Close()
		names, _ := varyFields(e.Header)
		key = variantKey(key, e.Variant, names, req.Header)
		if e, body, err = t.store.Get(key); err != nil {
			t.logGetError(req, key, err)
			return key, nil, nil
		}
	}
	names, star := varyFields(e.Header)
	if star {
		body.Close()
		return key, nil, nil
	}
	for _, n := range names {
		if varyValue(req.Header, n) != e.VaryValues[n] {
			body.Close()
			return key, nil, nil
		}
	}
	return key, e, body
}

func (t *Transport) logGetError(req *http.Request, key string, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
	case errors.Is(err, ErrCorrupt):
		t.corrupt.Add(1)
		t.log.Warn("cache: corrupt entry removed, treated as a miss", "url", req.URL.String(), "err", err)
		t.o.Events.Emit(events.Event{Type: events.Notice, URL: req.URL.String(), Kind: kind.Of(req),
			Method: req.Method, Reason: "cache-corrupt", Detail: err.Error()})
	default:
		t.log.Debug("cache: store read failed, treated as a miss", "key", key, "err", err)
	}
}

// varyFields returns the canonical field names a response's Vary lists, and star when it lists
// "*" (RFC 9110 §12.5.5: such a response never matches a later request).
func varyFields(h http.Header) (names []string, star bool) {
	for _, line := range h.Values("Vary") {
		for _, m := range freshness.SplitList(line) {
			if m == "*" {
				star = true
				continue
			}
			if n := http.CanonicalHeaderKey(m); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names, star
}

// varyValue is the normalised value of a request field for Vary matching (RFC 9111 §4.1): the
// lines joined with ", " and the whitespace around each member dropped, so that formatting
// differences a server cannot see do not split variants.
func varyValue(h http.Header, name string) string {
	var parts []string
	for _, line := range h.Values(name) {
		parts = append(parts, freshness.SplitList(line)...)
	}
	return strings.Join(parts, ",")
}
