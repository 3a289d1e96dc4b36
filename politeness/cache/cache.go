// Package cache is an RFC 9111 private cache. STUB: the cache work replaces this file.
package cache

import "net/http"

type Store interface{}

func NewTransport(next http.RoundTripper, store Store) http.RoundTripper { return next }

// StatusOf reports what the cache did for resp: "miss", "fresh", "revalidated", "stale", or "".
func StatusOf(resp *http.Response) string { return "" }
