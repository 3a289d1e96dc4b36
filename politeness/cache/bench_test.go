package cache_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

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

// page8K is the in-process origin of BenchmarkPage: every URL answers an 8 KiB page with the
// fields a typical server sends, fresh for ten minutes, without a network or a server.
type page8K struct{ body []byte }

func (p page8K) RoundTrip(req *http.Request) (*http.Response, error) {
	h := http.Header{
		"Date":           {time.Now().UTC().Format(http.TimeFormat)},
		"Content-Type":   {"text/html; charset=utf-8"},
		"Content-Length": {strconv.Itoa(len(p.body))},
		"Cache-Control":  {"max-age=600"},
		"Etag":           {`"5f3a-8k"`},
		"Last-Modified":  {"Sun, 01 Feb 2026 00:00:00 GMT"},
		"Server":         {"nginx"},
	}
	return &http.Response{Status: "200 OK", StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(p.body)), ContentLength: int64(len(p.body)), Request: req}, nil
}

// BenchmarkPage measures what the cache adds to one 8 KiB page, over an in-process origin (so
// only the cache's own work is timed). The miss cases read a new URL each time, as a crawl does:
// the page is fetched, stored and read to EOF; "miss/none" is the origin alone, the baseline the
// cache's cost is added to. The hit cases read one URL, fresh in the store; "hit/loopback" is one
// real HTTP exchange of the same page with a server on 127.0.0.1, what a hit must beat. Besides
// wall time, each case reports cpu-ns/op: the process's user and system CPU time per read.
//
//	go test -run '^$' -bench Page -benchmem ./politeness/cache/
func BenchmarkPage(b *testing.B) {
	origin := page8K{body: bytes.Repeat([]byte("<p>etiquette</p>"), 512)}
	stores := func(b *testing.B) []struct {
		name  string
		store cache.Store
	} {
		disk, err := cache.NewDiskStore(b.TempDir(), cache.DiskOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return []struct {
			name  string
			store cache.Store
		}{{"memory", cache.NewMemoryStore(0)}, {"disk", disk}}
	}
	read := func(b *testing.B, rt http.RoundTripper, url, want string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != int64(len(origin.body)) || cache.StatusOf(resp) != want {
			b.Fatalf("%d bytes, status %q; want %d, %q", n, cache.StatusOf(resp), len(origin.body), want)
		}
	}

	// loop runs one read per iteration and reports the CPU time it cost.
	loop := func(b *testing.B, one func(i int)) {
		b.ReportAllocs()
		before, ok := processCPU()
		i := 0
		for b.Loop() {
			i++
			one(i)
		}
		if after, _ := processCPU(); ok {
			b.ReportMetric(float64(after-before)/float64(b.N), "cpu-ns/op")
		}
	}

	b.Run("miss/none", func(b *testing.B) {
		loop(b, func(i int) { read(b, origin, "https://example.org/page/"+strconv.Itoa(i), "") })
	})
	for _, s := range stores(b) {
		b.Run("miss/"+s.name, func(b *testing.B) {
			rt := cache.New(origin, s.store, cache.Options{OmitHeaders: []string{"Set-Cookie", "Set-Cookie2"}})
			loop(b, func(i int) { read(b, rt, "https://example.org/page/"+strconv.Itoa(i), cache.Miss) })
		})
	}
	for _, s := range stores(b) {
		b.Run("hit/"+s.name, func(b *testing.B) {
			rt := cache.New(origin, s.store, cache.Options{OmitHeaders: []string{"Set-Cookie", "Set-Cookie2"}})
			read(b, rt, "https://example.org/page", cache.Miss)
			loop(b, func(int) { read(b, rt, "https://example.org/page", cache.Fresh) })
		})
	}
	b.Run("hit/loopback", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(origin.body)
		}))
		defer srv.Close()
		rt := http.DefaultTransport.(*http.Transport).Clone()
		defer rt.CloseIdleConnections()
		read(b, rt, srv.URL, "")
		loop(b, func(int) { read(b, rt, srv.URL, "") })
	})
}

// BenchmarkDiskOpen opens a disk store on a directory of 20,000 stored 8 KiB pages (160 MiB):
// the time to build the index from the records' heads, and the heap the index keeps per record.
//
//	go test -run '^$' -bench DiskOpen -benchtime 5x ./politeness/cache/
func BenchmarkDiskOpen(b *testing.B) {
	const records = 20000
	dir := b.TempDir()
	s, err := cache.NewDiskStore(dir, cache.DiskOptions{})
	if err != nil {
		b.Fatal(err)
	}
	page := bytes.Repeat([]byte("<p>etiquette</p>"), 512)
	header := http.Header{"Content-Type": {"text/html"}, "Cache-Control": {"max-age=3600"}}
	for i := range records {
		w, err := s.Put("GET https://example.org/page/"+strconv.Itoa(i), &cache.Entry{Status: 200, Header: header, Size: int64(len(page))})
		if err != nil {
			b.Fatal(err)
		}
		w.Write(page)
		if err := w.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	var kept []*cache.DiskStore // so the heap measured holds every store opened
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		s, err := cache.NewDiskStore(dir, cache.DiskOptions{})
		if err != nil {
			b.Fatal(err)
		}
		kept = append(kept, s)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/records, "ns/record")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(kept))/records, "heap-B/record")
	if _, body, err := kept[0].Get("GET https://example.org/page/7"); err != nil {
		b.Fatalf("a stored page is not found after opening: %v", err)
	} else {
		body.Close()
	}
}
