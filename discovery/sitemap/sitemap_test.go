package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

const site = "https://example.org"

// fixture reads testdata/sitemaps/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sitemaps", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// urlset returns a sitemap of n URLs on site, each entry about 200 bytes, like a real one.
func urlset(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "  <url>\n    <loc>%s/articles/2024/03/some-reasonably-long-article-slug-%07d.html</loc>\n"+
			"    <lastmod>2024-03-01T10:20:30+00:00</lastmod>\n    <changefreq>weekly</changefreq>\n"+
			"    <priority>0.5</priority>\n  </url>\n", site, i)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// gzipBomb returns about 1 MB of gzip that decompresses to 1 GiB: a sitemap start with two URLs,
// then 1,024 gzip members of 1 MiB of spaces each (a reader joins the members into one stream).
func gzipBomb(t testing.TB) []byte {
	t.Helper()
	head := gzipped(t, []byte(`<?xml version="1.0"?><urlset><url><loc>`+site+`/a</loc></url><url><loc>`+site+`/b</loc></url>`))
	member := gzipped(t, bytes.Repeat([]byte(" "), 1<<20))
	return append(head, bytes.Repeat(member, 1024)...)
}

type outcome struct {
	format   Format
	openErr  error    // errors.Is target for Open; nil for success
	eachErr  error    // errors.Is target for Each; nil for success
	locs     []string // the URLs delivered, in order; nil when only counted
	kept     int
	dropped  discovered.Dropped
	noLast   int
	check    func(t *testing.T, r Result)
	fileName string // the name in the file URL; the fixture's name when empty
}

func TestTolerances(t *testing.T) {
	ab := []string{site + "/a", site + "/b"}
	var huge strings.Builder
	huge.WriteString(`<urlset><url><loc>` + site + `/a</loc></url><url><loc>` + site + "/")
	huge.WriteString(strings.Repeat("x", 10_000))
	huge.WriteString(`</loc></url><url><loc>` + site + `/b</loc></url></urlset>`)
	longRun := []byte(`<urlset><url><loc>` + site + `/a</loc></url>` + strings.Repeat(" ", 100<<10) + `<url><loc>` + site + `/b</loc></url></urlset>`)

	cases := []struct {
		name string
		body func(t testing.TB) []byte
		opt  Options
		want outcome
	}{
		{"bom.xml", nil, Options{}, outcome{format: URLSet, locs: ab}},
		{"utf-16.xml", nil, Options{}, outcome{format: URLSet, locs: []string{site + "/caf%C3%A9", site + "/b"},
			check: func(t *testing.T, r Result) { wantEq(t, "Charset", r.Charset, "UTF-16") }}},
		{"junk-before-declaration.xml", nil, Options{}, outcome{format: URLSet, locs: ab,
			check: func(t *testing.T, r Result) { wantEq(t, "Junk", r.Junk, 180) }}},
		{"wrong-namespace.xml", nil, Options{}, outcome{format: URLSet, locs: ab}},
		{"no-namespace.xml", nil, Options{}, outcome{format: URLSet, locs: ab}},
		{"missing-close.xml", nil, Options{}, outcome{format: URLSet, locs: ab, eachErr: ErrTruncated}},
		{"truncated.xml.gz", nil, Options{}, outcome{format: URLSet, kept: 88, eachErr: ErrTruncated,
			check: func(t *testing.T, r Result) { wantEq(t, "Gzipped", r.Gzipped, true) }}},
		{"bare-ampersand.xml", nil, Options{}, outcome{format: URLSet,
			locs: []string{site + "/search?q=a&page=2", site + "/caf%C3%A9", site + "/x?a=1&b=2", site + "/%3Cbr%3E?a&b"},
			check: func(t *testing.T, r Result) {
				wantEq(t, "Repairs", r.Repairs, Repairs{Ampersands: 2, Entities: 1})
			}}},
		{"billion-laughs.xml", nil, Options{}, outcome{format: URLSet, locs: []string{site + "/&lol9;", site + "/b"}, noLast: 2}},
		{"iso-8859-1.xml", nil, Options{}, outcome{format: URLSet, locs: []string{site + "/caf%C3%A9", site + "/b"},
			check: func(t *testing.T, r Result) { wantEq(t, "Charset", r.Charset, "windows-1252") }}},
		{"invalid-utf-8.xml", nil, Options{}, outcome{format: URLSet, locs: []string{site + "/caf%EF%BF%BD", site + "/b"},
			check: func(t *testing.T, r Result) { wantEq(t, "Repairs.BadUTF8", r.Repairs.BadUTF8, 1) }}},
		{"control-characters.xml", nil, Options{}, outcome{format: URLSet, locs: ab,
			check: func(t *testing.T, r Result) { wantEq(t, "Repairs.Controls", r.Repairs.Controls, 3) }}},
		{"bad-priority.xml", nil, Options{}, outcome{format: URLSet, locs: []string{site + "/a", site + "/b", site + "/c"}, noLast: 3,
			check: func(t *testing.T, r Result) { wantEq(t, "Repairs.Priorities", r.Repairs.Priorities, 2) }}},
		{"lastmod.xml", nil, Options{}, outcome{format: URLSet, kept: 5, noLast: 3}}, // dates: TestLastMod
		{"scope.xml", nil, Options{}, outcome{format: URLSet,
			locs:    []string{site + "/trimmed", site + "/private", site + "/page", site + "/relative", site + "/upper-host"},
			dropped: discovered.Dropped{Invalid: 1, OffScope: 2}}},
		{"scope.xml", nil, Options{Allowed: site + "/p"}, outcome{format: URLSet,
			locs:    []string{site + "/trimmed", site + "/private", site + "/page", site + "/relative", site + "/upper-host"},
			dropped: discovered.Dropped{Invalid: 1, OffScope: 2}}},
		{"scope.xml", nil, Options{Allowed: "https://other.example"}, outcome{format: URLSet,
			locs: []string{"https://other.example/x"}, dropped: discovered.Dropped{Invalid: 1, OffScope: 6}}},
		{"index-without-loc.xml", nil, Options{}, outcome{format: Index, locs: []string{site + "/sitemap-2.xml"},
			dropped: discovered.Dropped{Invalid: 1}}},
		{"index-lists-itself.xml", nil, Options{}, outcome{format: Index,
			locs: []string{site + "/index-lists-itself.xml", site + "/sitemap-2.xml"}, noLast: 2}},
		{"plain-at.xml.gz", nil, Options{}, outcome{format: URLSet, locs: ab,
			check: func(t *testing.T, r Result) { wantEq(t, "Gzipped", r.Gzipped, false) }}},
		{"gzip-at.xml", nil, Options{}, outcome{format: URLSet, locs: ab,
			check: func(t *testing.T, r Result) { wantEq(t, "Gzipped", r.Gzipped, true) }}},
		{"broken-tag.xml", nil, Options{}, outcome{format: URLSet, locs: []string{site + "/a"}, noLast: 1, eachErr: ErrBroken}},
		{"text.txt", nil, Options{}, outcome{format: Text, locs: []string{site + "/a", site + "/b", site + "/d"}, noLast: 3,
			dropped: discovered.Dropped{Invalid: 2, OffScope: 1}}},
		{"rss.xml", nil, Options{}, outcome{format: Feed, eachErr: ErrFeed}},
		{"html-soft-404.html", nil, Options{}, outcome{openErr: ErrNotSitemap}},
		{"empty.xml", nil, Options{}, outcome{openErr: ErrNotSitemap}},
		{"not-xml.xml", nil, Options{}, outcome{openErr: ErrNotSitemap}},
		{"over MaxBytes", func(t testing.TB) []byte { return fixture(t, "lastmod.xml") }, Options{MaxBytes: 300},
			outcome{format: URLSet, kept: 2, eachErr: ErrTooLarge}},
		{"gzip bomb (1 GB from 1 MB)", gzipBomb, Options{}, outcome{format: URLSet, locs: ab, noLast: 2, eachErr: ErrTooLarge,
			check: func(t *testing.T, r Result) {
				if r.Bytes > DefaultMaxBytes {
					t.Errorf("decompressed %d bytes, past the %d cap", r.Bytes, DefaultMaxBytes)
				}
				wantEq(t, "Repairs.CutRuns", r.Repairs.CutRuns, 1)
			}}},
		{"50,000 URLs", func(testing.TB) []byte { return urlset(50_000) }, Options{}, outcome{format: URLSet, kept: 50_000}},
		{"50,001 URLs", func(testing.TB) []byte { return urlset(50_001) }, Options{}, outcome{format: URLSet, kept: 50_000, eachErr: ErrCut}},
		{"50,001 URLs, gzipped", func(t testing.TB) []byte { return gzipped(t, urlset(50_001)) }, Options{}, outcome{format: URLSet, kept: 50_000, eachErr: ErrCut}},
		{"text: more lines than MaxURLs", func(testing.TB) []byte { return []byte(site + "/a\n" + site + "/b\nnot a URL\n" + site + "/c\n") }, Options{MaxURLs: 2},
			outcome{format: Text, locs: []string{site + "/a", site + "/b"}, noLast: 2, eachErr: ErrCut}},
		{"a loc of 10 KB", func(testing.TB) []byte { return []byte(huge.String()) }, Options{}, outcome{format: URLSet, locs: ab, noLast: 2,
			dropped: discovered.Dropped{TooLong: 1}}},
		{"a run over 64 KiB", func(testing.TB) []byte { return longRun }, Options{}, outcome{format: URLSet, locs: ab, noLast: 2,
			check: func(t *testing.T, r Result) { wantEq(t, "Repairs.CutRuns", r.Repairs.CutRuns, 1) }}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body []byte
			if c.body != nil {
				body = c.body(t)
			} else {
				body = fixture(t, c.name)
			}
			name := c.want.fileName
			if name == "" {
				name = strings.ReplaceAll(c.name, " ", "-")
			}
			f, err := Open(bytes.NewReader(body), site+"/"+name, c.opt)
			if c.want.openErr != nil || err != nil {
				if !errors.Is(err, c.want.openErr) {
					t.Fatalf("Open: %v, want %v", err, c.want.openErr)
				}
				return
			}
			wantEq(t, "Format", f.Format, c.want.format)
			var got []string
			noLast := 0
			res, err := f.Each(func(u discovered.URL) error {
				got = append(got, u.Loc)
				if u.LastMod.IsZero() {
					noLast++
				}
				return nil
			})
			if !errors.Is(err, c.want.eachErr) || (err != nil && c.want.eachErr == nil) {
				t.Fatalf("Each: %v, want %v", err, c.want.eachErr)
			}
			if c.want.locs != nil {
				wantEq(t, "URLs", got, c.want.locs)
				c.want.kept = len(c.want.locs)
			}
			wantEq(t, "Kept", res.Kept, c.want.kept)
			wantEq(t, "delivered", len(got), c.want.kept)
			wantEq(t, "Dropped", res.Dropped, c.want.dropped)
			wantEq(t, "NoLastMod", res.NoLastMod, c.want.noLast)
			wantEq(t, "URLs without LastMod", noLast, c.want.noLast)
			if c.want.check != nil {
				c.want.check(t, res)
			}
		})
	}
}

func wantEq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestLastMod(t *testing.T) {
	f, err := Open(bytes.NewReader(fixture(t, "lastmod.xml")), site+"/lastmod.xml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Time{}
	if _, err := f.Each(func(u discovered.URL) error { got[u.Loc] = u.LastMod; return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{
		site + "/rfc3339":    time.Date(2024, 3, 1, 9, 20, 30, 0, time.UTC),
		site + "/date":       time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC),
		site + "/no-seconds": {}, // W3C datetime without seconds: gopher does not read it
		site + "/garbage":    {},
		site + "/absent":     {},
	}
	for loc, w := range want {
		if g, ok := got[loc]; !ok || !g.Equal(w) {
			t.Errorf("%s: lastmod %v, want %v", loc, g, w)
		}
	}
}

// The repaired stream must not depend on how the body arrives: a reference or a CDATA marker
// split across reads is mended as if whole.
func TestRepairIsChunkingIndependent(t *testing.T) {
	body := []byte(`<urlset><url><loc><![CDATA[` + site + `/q?a=1&b=2]]></loc></url><url><loc>` + site +
		`/caf&eacute;&#x41;?x&amp;y&#0;</loc><priority>high</priority></url></urlset>`)
	locs := func(r io.Reader) []string {
		f, err := Open(r, site+"/s.xml", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if _, err := f.Each(func(u discovered.URL) error { got = append(got, u.Loc); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	whole, bytewise := locs(bytes.NewReader(body)), locs(iotest.OneByteReader(bytes.NewReader(body)))
	// "&#0;" names no XML character, so it is literal text, and its '#' starts a fragment.
	want := []string{site + "/q?a=1&b=2", site + "/caf%C3%A9A?x&y&"}
	wantEq(t, "whole", whole, want)
	wantEq(t, "one byte at a time", bytewise, want)
}

func TestEachTwiceFails(t *testing.T) {
	f, err := Open(bytes.NewReader(fixture(t, "bom.xml")), site+"/bom.xml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	none := func(discovered.URL) error { return nil }
	if _, err := f.Each(none); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Each(none); err == nil {
		t.Error("a second Each succeeded on a consumed body")
	}
}

func TestCallbackErrorStopsTheFile(t *testing.T) {
	stop := errors.New("frontier full")
	f, err := Open(bytes.NewReader(urlset(10)), site+"/s.xml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	res, err := f.Each(func(discovered.URL) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("Each returned %v, want the callback's own error", err)
	}
	wantEq(t, "calls", n, 3)
	wantEq(t, "Kept", res.Kept, 3)
}

func TestFeedBodyReplaysFromTheStart(t *testing.T) {
	body := fixture(t, "rss.xml")
	f, err := Open(bytes.NewReader(gzipped(t, body)), site+"/feed", Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "Format", f.Format, Feed)
	var got bytes.Buffer
	if _, err := got.ReadFrom(f.Body()); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "Body", got.String(), string(body))
}

// Cross-submission: robots.txt of example.org names an index on a CDN. The index's sitemaps may
// live on the CDN (its own site) or on example.org; the pages only on example.org.
func TestCrossSubmittedIndex(t *testing.T) {
	index := `<sitemapindex><sitemap><loc>https://cdn.example/s1.xml</loc></sitemap>` +
		`<sitemap><loc>` + site + `/s2.xml</loc></sitemap><sitemap><loc>https://third.example/s3.xml</loc></sitemap></sitemapindex>`
	pages := `<urlset><url><loc>https://cdn.example/page</loc></url><url><loc>` + site + `/page</loc></url></urlset>`
	for _, c := range []struct {
		body string
		want []string
	}{
		{index, []string{"https://cdn.example/s1.xml", site + "/s2.xml"}},
		{pages, []string{site + "/page"}},
	} {
		f, err := Open(strings.NewReader(c.body), "https://cdn.example/sitemap.xml", Options{Allowed: site})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		res, err := f.Each(func(u discovered.URL) error { got = append(got, u.Loc); return nil })
		if err != nil {
			t.Fatal(err)
		}
		wantEq(t, string(f.Format), got, c.want)
		wantEq(t, "OffScope", res.Dropped.OffScope, 1)
	}
}
