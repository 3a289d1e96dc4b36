package cache_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/politecrawl/etiquette/politeness/cache"
)

const largeBody = 32 << 20

// largeOrigin serves largeBody bytes: /stale with max-age=0 and no validator (every read is a
// full download, stored again), /fresh with max-age=3600 (every read after the first is a hit).
func largeOrigin(b *testing.B) *httptest.Server {
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 2048)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fresh" {
			w.Header().Set("Cache-Control", "max-age=3600")
		} else {
			w.Header().Set("Cache-Control", "max-age=0")
		}
		w.Header().Set("Content-Length", strconv.Itoa(largeBody))
		for n := 0; n < largeBody; n += len(chunk) {
			w.Write(chunk)
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}

func readAll(b *testing.B, rt http.RoundTripper, url string, want string) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != largeBody {
		b.Fatalf("read %d bytes (%v), want %d", n, err, largeBody)
	}
	if got := cache.StatusOf(resp); got != want {
		b.Fatalf("status %q, want %q", got, want)
	}
}

// BenchmarkLargeBody moves a 32 MiB body through the cache with the disk store and without a
// cache. "disk miss" downloads and stores the body on every iteration; "disk hit" serves it from
// the store (including the checksum pass that guards against damaged records). B/op shows that
// the body is streamed: it stays near the no-cache figure instead of growing with the body.
//
//	go test -run '^$' -bench LargeBody -benchmem ./politeness/cache/
func BenchmarkLargeBody(b *testing.B) {
	srv := largeOrigin(b)
	b.Run("no cache", func(b *testing.B) {
		rt := http.DefaultTransport.(*http.Transport).Clone()
		b.SetBytes(largeBody)
		b.ReportAllocs()
		for b.Loop() {
			readAll(b, rt, srv.URL+"/stale", "")
		}
	})
	b.Run("disk miss", func(b *testing.B) {
		store, err := cache.NewDiskStore(b.TempDir(), cache.DiskOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rt := cache.NewTransport(http.DefaultTransport.(*http.Transport).Clone(), store)
		b.SetBytes(largeBody)
		b.ReportAllocs()
		for b.Loop() {
			readAll(b, rt, srv.URL+"/stale", cache.Miss)
		}
	})
	b.Run("disk hit", func(b *testing.B) {
		store, err := cache.NewDiskStore(b.TempDir(), cache.DiskOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rt := cache.NewTransport(http.DefaultTransport.(*http.Transport).Clone(), store)
		readAll(b, rt, srv.URL+"/fresh", cache.Miss)
		b.SetBytes(largeBody)
		b.ReportAllocs()
		for b.Loop() {
			readAll(b, rt, srv.URL+"/fresh", cache.Fresh)
		}
	})
}

// BenchmarkHit measures a fresh hit of a 4 KiB page: lookup, freshness arithmetic, response.
//
//	go test -run '^$' -bench Hit -benchmem ./politeness/cache/
func BenchmarkHit(b *testing.B) {
	page := bytes.Repeat([]byte("p"), 4<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Header().Set("ETag", `"p"`)
		w.Write(page)
	}))
	b.Cleanup(srv.Close)
	disk, err := cache.NewDiskStore(b.TempDir(), cache.DiskOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []struct {
		name  string
		store cache.Store
	}{{"memory", cache.NewMemoryStore(0)}, {"disk", disk}} {
		b.Run(s.name, func(b *testing.B) {
			rt := cache.NewTransport(http.DefaultTransport, s.store)
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			warm, err := rt.RoundTrip(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, warm.Body)
			warm.Body.Close()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if cache.StatusOf(resp) != cache.Fresh {
					b.Fatalf("status %q", cache.StatusOf(resp))
				}
			}
		})
	}
}
