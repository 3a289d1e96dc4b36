package redisstore

import (
	"bytes"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// What Redis holds may be damaged, or written by someone else: every decoder refuses what it
// cannot read, never panics, and reads back what the encoder wrote.

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(0, frontier.Entry{URL: "http://o.test/a?b=c", Depth: 3, Via: frontier.ViaLink}))
	f.Add(encodeEntry(2, frontier.Entry{URL: "http://o.test/b", Depth: 1, Via: frontier.ViaSitemap, LastMod: time.Unix(-5, 0)}))
	f.Add("1\n2\nsitemap\n\nhttp://o.test/\nwith\nlines")
	f.Add("x\n1\nlink\n\nhttp://o.test/")
	f.Add("0\n1\nlink\n007\nhttp://o.test/")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		n, e, err := decodeEntry(s)
		if err != nil {
			return
		}
		n2, e2, err := decodeEntry(encodeEntry(n, e))
		if err != nil || n2 != n || e2 != e {
			t.Errorf("decode(%q) = %d %+v, which round-trips to %d %+v, %v", s, n, e, n2, e2, err)
		}
	})
}

func FuzzDecodeCached(f *testing.F) {
	meta, _ := encodeMeta("k", &cache.Entry{Status: 200, Header: map[string][]string{"Etag": {`"1"`}}})
	f.Add(string(meta), string(sealed("", []byte("body"))))
	f.Add(recordMagic+"\x00\x00\x00\x00{}", "\x00\x00\x00\x00")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, m, b string) {
		e, body, err := decodeCached("k", m, true, b, true)
		if err != nil {
			return
		}
		if e.Key != "k" || e.Size != int64(len(body)) {
			t.Errorf("decoded an entry of key %q, size %d for %d bytes", e.Key, e.Size, len(body))
		}
		if !bytes.Equal(sealed("", body), []byte(b)) {
			t.Errorf("the body %q does not seal back to the stored %q", body, b)
		}
	})
}

func FuzzDecodeRobots(f *testing.F) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	good, _ := encodeRobots(&robots.Entry{Origin: "http://o.test", URL: "http://o.test/robots.txt", Outcome: robots.Parsed,
		Status: 200, Fetched: now, Expires: now.Add(time.Hour), File: robots.Parse([]byte("User-agent: *\nDisallow: /x\n")),
		Body: []byte("User-agent: *\nDisallow: /x\n"), ETag: `"1"`, Good: now})
	f.Add(good)
	f.Add([]byte(`{"origin":"http://o.test","outcome":9}`))
	f.Add([]byte(`{"origin":"http://other.test","outcome":1}`))
	f.Add([]byte("not json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeRobots("http://o.test", b)
		if err != nil {
			return
		}
		if e.Origin != "http://o.test" {
			t.Errorf("decoded an entry of %q for http://o.test", e.Origin)
		}
		again, err := encodeRobots(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeRobots("http://o.test", again); err != nil {
			t.Errorf("an entry decoded from %q does not decode again: %v", b, err)
		}
	})
}
