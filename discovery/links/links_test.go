package links

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// collect runs Extract and returns the links as "url" or "url nofollow".
func collect(t testing.TB, page, body string, opts Options) ([]string, Summary, error) {
	t.Helper()
	var got []string
	s, err := Extract(strings.NewReader(body), mustURL(t, page), opts, func(l Link) {
		if l.Nofollow {
			got = append(got, l.URL.String()+" nofollow")
		} else {
			got = append(got, l.URL.String())
		}
	})
	return got, s, err
}

func TestExtractResolvesLinksAsABrowserWould(t *testing.T) {
	const page = "https://user:secret@example.org/dir/page.html?x=1"
	tests := []struct {
		name, body string
		want       []string
	}{
		{"relative path", `<a href="next.html">`, []string{"https://example.org/dir/next.html"}},
		{"root-relative", `<a href="/top">`, []string{"https://example.org/top"}},
		{"scheme-relative", `<a href="//cdn.example/x">`, []string{"https://cdn.example/x"}},
		{"absolute http", `<a href="http://other.example/">`, []string{"http://other.example/"}},
		{"fragment dropped", `<a href="#top"><a href="b#c">`, []string{"https://example.org/dir/page.html?x=1", "https://example.org/dir/b"}},
		{"userinfo in the link dropped", `<a href="https://u:p@other.example/">`, []string{"https://other.example/"}},
		{"the page's credentials are not passed on", `<a href="same-site">`, []string{"https://example.org/dir/same-site"}},
		{"whitespace and newlines inside", "<a href=\" /a\n/b\t \">", []string{"https://example.org/a/b"}},
		{"entities decoded", `<a href="/s?a=1&amp;b=2">`, []string{"https://example.org/s?a=1&b=2"}},
		{"area", `<map><area href="/area" shape="rect"></map>`, []string{"https://example.org/area"}},
		{"uppercase tag and attribute", `<A HREF="/UP">`, []string{"https://example.org/UP"}},
		{"first of duplicate attributes", `<a href="/first" href="/second">`, []string{"https://example.org/first"}},
		{"empty href is the page", `<a href="">`, []string{"https://example.org/dir/page.html?x=1"}},
		{"base changes resolution", `<base href="https://base.example/b/"><a href="c">`, []string{"https://base.example/b/c"}},
		{"relative base", `<base href="/other/"><a href="c">`, []string{"https://example.org/other/c"}},
		{"only the first base counts", `<base href="/one/"><base href="/two/"><a href="c">`, []string{"https://example.org/one/c"}},
		{"a base that is not http is ignored", `<base href="javascript:void(0)"><a href="c">`, []string{"https://example.org/dir/c"}},
		{"rel nofollow", `<a href="/n" rel="external NoFollow">`, []string{"https://example.org/n nofollow"}},
		{"robots meta nofollow", `<head><meta name="ROBOTS" content="noindex, nofollow"></head><a href="/x">`, []string{"https://example.org/x nofollow"}},
		{"robots meta none", `<meta name="robots" content="none"><a href="/x">`, []string{"https://example.org/x nofollow"}},
		{"another meta is no robots meta", `<meta name="description" content="nofollow"><a href="/x">`, []string{"https://example.org/x"}},
		{"links in scripts and comments are not links", `<script>"<a href='/s'>"</script><!-- <a href="/c"> --><a href="/real">`,
			[]string{"https://example.org/real"}},
		{"mailto, javascript, tel and data skipped", `<a href="mailto:a@b"><a href="javascript:x()"><a href="tel:1"><a href="data:,x">`, nil},
		{"no href", `<a name="anchor">`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := collect(t, page, tt.body, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("links %q; want %q", got, tt.want)
			}
		})
	}
}

func TestExtractCountsWhatItDoesNotReport(t *testing.T) {
	long := "/" + strings.Repeat("x", 100)
	tests := []struct {
		name  string
		body  string
		opts  Options
		links int
		check func(Summary) bool
	}{
		{"links beyond the cap are counted", strings.Repeat(`<a href="/a">`, 7), Options{MaxLinks: 5}, 5,
			func(s Summary) bool { return s.Links == 5 && s.OverLimit == 2 }},
		{"an over-long href is skipped and counted", `<a href="` + long + `"><a href="/ok">`, Options{MaxAttrBytes: 50}, 1,
			func(s Summary) bool { return s.TooLong == 1 }},
		{"unusable hrefs are counted", `<a href="mailto:x@y"><a href="http://[::1">`, Options{}, 0,
			func(s Summary) bool { return s.Unusable == 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, s, err := collect(t, "https://example.org/", tt.body, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.links || !tt.check(s) {
				t.Fatalf("%d links, summary %+v", len(got), s)
			}
		})
	}
}

func TestExtractReportsTypedHeadLinks(t *testing.T) {
	body := `<html><head>
<link rel="stylesheet" href="/style.css">
<link rel="alternate" type="application/rss+xml" title="News feed" href="/feed.xml">
<link rel="Alternate Sitemap" href="/both#x">
<link rel="https://api.w.org/" href="https://example.org/wp-json/">
<link rel="api-catalog" href="/.well-known/api-catalog">
<link rel="alternate" href="mailto:x@y">
</head><body></body></html>`
	_, s, err := collect(t, "https://example.org/", body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []HeadLink{
		{RelAlternate, mustURL(t, "https://example.org/feed.xml"), "application/rss+xml", "News feed"},
		{RelAlternate, mustURL(t, "https://example.org/both"), "", ""},
		{RelSitemap, mustURL(t, "https://example.org/both"), "", ""},
		{RelWordPressAPI, mustURL(t, "https://example.org/wp-json/"), "", ""},
		{RelAPICatalog, mustURL(t, "https://example.org/.well-known/api-catalog"), "", ""},
	}
	if len(s.Head) != len(want) {
		t.Fatalf("head links %+v; want %+v", s.Head, want)
	}
	for i, w := range want {
		g := s.Head[i]
		if g.Rel != w.Rel || g.URL.String() != w.URL.String() || g.Type != w.Type || g.Title != w.Title {
			t.Fatalf("head link %d = %+v; want %+v", i, g, w)
		}
	}
	_, s, _ = collect(t, "https://example.org/", strings.Repeat(`<link rel="sitemap" href="/s">`, MaxHeadLinks+3), Options{})
	if len(s.Head) != MaxHeadLinks || s.HeadOverLimit != 3 {
		t.Fatalf("%d head links, %d over; want %d and 3", len(s.Head), s.HeadOverLimit, MaxHeadLinks)
	}
}

func TestExtractStopsAtAnOverlongTokenKeepingWhatItFound(t *testing.T) {
	body := `<a href="/before"><script>` + strings.Repeat("x", 5000) + `</script><a href="/after">`
	got, s, err := collect(t, "https://example.org/", body, Options{MaxTokenBytes: 1024})
	if !errors.Is(err, ErrTokenTooLong) {
		t.Fatalf("err = %v; want ErrTokenTooLong", err)
	}
	if !slices.Equal(got, []string{"https://example.org/before"}) || s.Links != 1 {
		t.Fatalf("links %q; want the one before the long token", got)
	}
}

func TestExtractPassesOnTheReadersError(t *testing.T) {
	cut := errors.New("body too large")
	r := io.MultiReader(strings.NewReader(`<a href="/one">`), iotest.ErrReader(cut))
	var n int
	_, err := Extract(r, mustURL(t, "https://example.org/"), Options{}, func(Link) { n++ })
	if !errors.Is(err, cut) || n != 1 {
		t.Fatalf("err = %v after %d links; want the reader's error after 1", err, n)
	}
}

func TestNofollow(t *testing.T) {
	tests := []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{"noindex"}, false},
		{[]string{"noindex, nofollow"}, true},
		{[]string{"NONE"}, true},
		{[]string{"index", "nofollow"}, true},
		{[]string{"otherbot: nofollow"}, true},
		{[]string{"googlebot: noindex, nofollow"}, true},
		{[]string{"unavailable_after: Wednesday, 03-Nov-2027 15:00:00 GMT"}, false},
		{[]string{"nofollowing"}, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.values {
			h.Add("X-Robots-Tag", v)
		}
		if got := HeaderNofollow(h); got != tt.want {
			t.Errorf("HeaderNofollow(%q) = %v; want %v", tt.values, got, tt.want)
		}
	}
}

// FuzzExtract feeds arbitrary pages: Extract never panics, and every link it reports is an
// absolute http(s) URL with a host, no fragment and no userinfo, within the cap.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{`<a href="/a#b">`, `<base href="//h/"><a href="x">`, `<a href="https://u:p@h/">`,
		`<meta name=robots content=none><a href=x rel=nofollow>`, `<link rel="alternate sitemap" href="/s" title="t">`,
		"<a href=\"\x00\">", `<script><a href="/no"></script>`, `<a href='  //[::1]:80/%zz'>`} {
		f.Add(s)
	}
	page := mustURL(f, "https://user:pw@example.org/p/q")
	f.Fuzz(func(t *testing.T, body string) {
		n := 0
		check := func(u *url.URL) {
			if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
				t.Fatalf("reported %q", u)
			}
		}
		s, _ := Extract(strings.NewReader(body), page, Options{MaxLinks: 20, MaxAttrBytes: 64, MaxTokenBytes: 4096}, func(l Link) {
			n++
			check(l.URL)
		})
		for _, h := range s.Head {
			check(h.URL)
		}
		if n != s.Links || n > 20 || len(s.Head) > MaxHeadLinks {
			t.Fatalf("%d links reported, summary %+v", n, s)
		}
	})
}
