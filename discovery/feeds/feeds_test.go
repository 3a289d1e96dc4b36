package feeds

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/discovery/sitemap"
)

const rss = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>News</title><link>https://example.org/</link>
<item><title>Updated</title><link>https://example.org/news/1</link><pubDate>Fri, 01 Mar 2024 10:00:00 GMT</pubDate></item>
<item><title>Guid only</title><guid>https://example.org/?p=2</guid></item>
<item><title>Relative, with secrets</title><link>/news/3?x=1#comments</link></item>
<item><title>Credentials</title><link>https://user:pw@example.org/news/4</link></item>
<item><title>Elsewhere</title><link>https://other.example/news/5</link></item>
<item><title>No link at all</title><description>text</description></item>
<item><title>Not http</title><link>ftp://example.org/file</link></item>
</channel></rss>`

const atom = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title>
<entry><title>A</title><link rel="alternate" href="https://example.org/a"/><link rel="edit" href="https://example.org/edit/a"/>
 <updated>2024-03-02T10:00:00Z</updated><published>2024-03-01T10:00:00Z</published></entry>
<entry><title>B</title><link href="https://example.org/b"/><published>2024-03-01T09:00:00Z</published></entry>
</feed>`

const jsonFeed = `{"version": "https://jsonfeed.org/version/1.1", "title": "J",
 "items": [
  {"id": "1", "url": "https://example.org/j/1", "date_modified": "2024-03-03T00:00:00Z", "date_published": "2024-03-01T00:00:00Z"},
  {"id": "2", "url": "https://example.org/j/2"},
  {"id": "3", "external_url": "https://other.example/x"}
 ]}`

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, body, fileURL string
		opt                 Options
		want                *Feed
		err                 error
	}{
		{"RSS", rss, "https://example.org/feed", Options{}, &Feed{Format: "rss",
			Entries: []discovered.URL{
				{Loc: "https://example.org/news/1", LastMod: at("2024-03-01T10:00:00Z")},
				{Loc: "https://example.org/?p=2"},
				{Loc: "https://example.org/news/3?x=1"},
				{Loc: "https://example.org/news/4"},
			},
			NoLastMod: 3,
			Dropped:   discovered.Dropped{Invalid: 2, OffScope: 1},
		}, nil},
		{"Atom: updated wins over published", atom, "https://example.org/atom.xml", Options{}, &Feed{Format: "atom",
			Entries: []discovered.URL{
				{Loc: "https://example.org/a", LastMod: at("2024-03-02T10:00:00Z")},
				{Loc: "https://example.org/b", LastMod: at("2024-03-01T09:00:00Z")},
			},
		}, nil},
		{"JSON Feed", jsonFeed, "https://example.org/feed.json", Options{}, &Feed{Format: "json",
			Entries: []discovered.URL{
				{Loc: "https://example.org/j/1", LastMod: at("2024-03-03T00:00:00Z")},
				{Loc: "https://example.org/j/2"},
			},
			NoLastMod: 1,
			Dropped:   discovered.Dropped{OffScope: 1},
		}, nil},
		{"served by a feed service for the origin", atom, "https://feeds.example.net/blog", Options{Allowed: "https://example.org"}, &Feed{Format: "atom",
			Entries: []discovered.URL{
				{Loc: "https://example.org/a", LastMod: at("2024-03-02T10:00:00Z")},
				{Loc: "https://example.org/b", LastMod: at("2024-03-01T09:00:00Z")},
			},
		}, nil},
		{"MaxEntries: reading stops at the cap, and says so", atom, "https://example.org/atom.xml", Options{MaxEntries: 1}, &Feed{Format: "atom",
			Entries: []discovered.URL{{Loc: "https://example.org/a", LastMod: at("2024-03-02T10:00:00Z")}},
		}, ErrCut},
		{"an HTML page", "<!DOCTYPE html><html><body>404</body></html>", "https://example.org/feed", Options{}, nil, ErrNotFeed},
		{"empty", "", "https://example.org/feed", Options{}, nil, ErrNotFeed},
		{"broken JSON", `{"version": "https://jsonfeed.org/version/1", "items": [`, "https://example.org/feed.json", Options{}, &Feed{Format: "json"}, ErrBroken},
		{"broken JSON after an item", `{"version": "https://jsonfeed.org/version/1", "items": [{"url": "/j/1"}, {"url": `, "https://example.org/feed.json", Options{}, &Feed{Format: "json",
			Entries: []discovered.URL{{Loc: "https://example.org/j/1"}}, NoLastMod: 1,
		}, ErrBroken},
		{"broken XML: the entries before are kept", `<rss version="2.0"><channel><item><link>https://example.org/a</link></item><item><link>`, "https://example.org/feed", Options{}, &Feed{Format: "rss",
			Entries: []discovered.URL{{Loc: "https://example.org/a"}}, NoLastMod: 1,
		}, ErrBroken},
		{"over MaxBytes: the entries before are kept", rss, "https://example.org/feed", Options{MaxBytes: int64(strings.Index(rss, "<item><title>Guid"))}, &Feed{Format: "rss",
			Entries: []discovered.URL{{Loc: "https://example.org/news/1", LastMod: at("2024-03-01T10:00:00Z")}},
		}, ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(c.body), c.fileURL, c.opt)
			if !errors.Is(err, c.err) || (err != nil && c.err == nil) {
				t.Fatalf("Parse: %v, want %v", err, c.err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Parse =\n %+v\nwant\n %+v", got, c.want)
			}
		})
	}
}

// A feed listed as a sitemap (robots.txt "Sitemap:" pointing at RSS) is handed over by the sitemap
// wrapper, gzip and all.
func TestFeedFromTheSitemapWrapper(t *testing.T) {
	body, err := os.Open("../../testdata/sitemaps/rss.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	f, err := sitemap.Open(body, "https://example.org/rss.xml", sitemap.Options{})
	if err != nil || f.Format != sitemap.Feed {
		t.Fatalf("sitemap.Open: %v, %v", f, err)
	}
	got, err := Parse(f.Body(), f.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []discovered.URL{{Loc: "https://example.org/news/1"}}
	if !reflect.DeepEqual(got.Entries, want) {
		t.Errorf("entries %+v, want %+v", got.Entries, want)
	}
}
