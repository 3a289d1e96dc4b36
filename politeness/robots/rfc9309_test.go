package robots

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

type decideCase struct {
	name     string
	robots   string
	token    string
	url      string
	allowed  bool
	wantLine int // 0: no rule decides
}

func runDecideCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := url.Parse(c.url)
			if err != nil {
				t.Fatalf("bad test URL %q: %v", c.url, err)
			}
			d := Parse([]byte(c.robots)).Decide(c.token, u)
			if d.Allowed != c.allowed || d.Line != c.wantLine {
				t.Errorf("Decide(%q, %s) = allowed %v by line %d, want allowed %v by line %d; reason: %s",
					c.token, c.url, d.Allowed, d.Line, c.allowed, c.wantLine, d.Reason)
			}
		})
	}
}

// RFC 9309 §5.1, the simple example, with the outcomes its text describes.
func TestRFC9309_5_1_SimpleExample(t *testing.T) {
	const robots = "User-Agent: *\n" +
		"Disallow: *.gif$\n" +
		"Disallow: /example/\n" +
		"Allow: /publications/\n" +
		"\n" +
		"User-Agent: foobot\n" +
		"Disallow:/\n" +
		"Allow:/example/page.html\n" +
		"Allow:/example/allowed.gif\n" +
		"\n" +
		"User-Agent: barbot\n" +
		"User-Agent: bazbot\n" +
		"Disallow: /example/page.html\n" +
		"\n" +
		"User-Agent: quxbot\n" +
		"\n" +
		"EOF\n"
	runDecideCases(t, []decideCase{
		{"foobot may fetch page.html", robots, "foobot", "http://h/example/page.html", true, 8},
		{"foobot may fetch allowed.gif", robots, "foobot", "http://h/example/allowed.gif", true, 9},
		{"foobot may fetch nothing else", robots, "foobot", "http://h/example/other.html", false, 7},
		{"foobot root", robots, "FooBot", "http://h/", false, 7},
		{"barbot may not fetch page.html", robots, "barbot", "http://h/example/page.html", false, 13},
		{"bazbot may not fetch page.html", robots, "bazbot", "http://h/example/page.html", false, 13},
		{"barbot may fetch the rest", robots, "barbot", "http://h/example/other.html", true, 0},
		{"barbot is not bound by * (gif)", robots, "barbot", "http://h/x.gif", true, 0},
		{"quxbot's empty group allows everything", robots, "quxbot", "http://h/example/page.html", true, 0},
		{"others: gif disallowed", robots, "otherbot", "http://h/images/a.gif", false, 2},
		{"others: gif with query is not at the end", robots, "otherbot", "http://h/images/a.gif?x", true, 0},
		{"others: /example/ disallowed", robots, "otherbot", "http://h/example/x", false, 3},
		{"others: /publications/ allowed", robots, "otherbot", "http://h/publications/x", true, 4},
		{"others: the rest allowed", robots, "otherbot", "http://h/about", true, 0},
	})
}

// RFC 9309 §5.2, the longest-match example.
func TestRFC9309_5_2_LongestMatch(t *testing.T) {
	const robots = "User-Agent: foobot\n" +
		"Allow: /example/page/\n" +
		"Disallow: /example/page/disallowed.gif\n"
	runDecideCases(t, []decideCase{
		{"longer disallow wins", robots, "foobot", "http://h/example/page/disallowed.gif", false, 3},
		{"allow for the rest of the directory", robots, "foobot", "http://h/example/page/other.gif", true, 2},
		{"outside both rules", robots, "foobot", "http://h/example/", true, 0},
	})
}

// RFC 9309 §2.1 and §2.2.1: groups, user-agent lines and product tokens.
func TestRFC9309_2_2_1_Groups(t *testing.T) {
	runDecideCases(t, []decideCase{
		{"rules before any user-agent are ignored, the rest of the file kept",
			"Disallow: /a\nUser-agent: FooBot\nDisallow: /b\n", "FooBot", "http://h/a", true, 0},
		{"rules before any user-agent are ignored, the rest of the file kept (rule after)",
			"Disallow: /a\nUser-agent: FooBot\nDisallow: /b\n", "FooBot", "http://h/b", false, 3},
		{"consecutive user-agent lines share a group",
			"User-agent: a\nUser-agent: FooBot\nDisallow: /x\n", "FooBot", "http://h/x", false, 3},
		{"blank lines do not end a user-agent run",
			"User-agent: a\n\n\nUser-agent: FooBot\n\nDisallow: /x\n", "FooBot", "http://h/x", false, 6},
		{"an unknown record does not end a user-agent run",
			"User-agent: FooBot\nNoindex: /y\nUser-agent: *\nDisallow: /x\n", "FooBot", "http://h/x", false, 4},
		{"a sitemap record does not end a user-agent run",
			"User-agent: FooBot\nSitemap: https://h/s.xml\nUser-agent: *\nDisallow: /x\n", "FooBot", "http://h/x", false, 4},
		{"a crawl-delay record does not end a user-agent run",
			"User-agent: FooBot\nCrawl-delay: 3\nUser-agent: BarBot\nDisallow: /x\n", "FooBot", "http://h/x", false, 4},
		{"a user-agent after a rule starts a new group",
			"User-agent: FooBot\nDisallow: /x\nUser-agent: BarBot\nDisallow: /y\n", "FooBot", "http://h/y", true, 0},
		{"groups for the same token are combined",
			"User-agent: FooBot\nDisallow: /x\nUser-agent: BarBot\nDisallow: /y\nUser-agent: foobot\nDisallow: /z\n", "FooBot", "http://h/z", false, 6},
		{"groups for the same token are combined (first group)",
			"User-agent: FooBot\nDisallow: /x\nUser-agent: BarBot\nDisallow: /y\nUser-agent: foobot\nDisallow: /z\n", "FooBot", "http://h/x", false, 2},
		{"longest match across combined groups",
			"User-agent: FooBot\nDisallow: /x\nUser-agent: FooBot\nAllow: /x/y\n", "FooBot", "http://h/x/y", true, 4},
		{"* groups are combined",
			"User-agent: *\nDisallow: /x\nUser-agent: BarBot\nDisallow: /y\nUser-agent: *\nDisallow: /z\n", "FooBot", "http://h/z", false, 6},
		{"the specific group replaces *",
			"User-agent: *\nDisallow: /\nUser-agent: FooBot\nDisallow: /private\n", "FooBot", "http://h/public", true, 0},
		{"an empty specific group allows everything",
			"User-agent: *\nDisallow: /\nUser-agent: FooBot\n", "FooBot", "http://h/public", true, 0},
		{"no specific group and no *: allowed",
			"User-agent: BarBot\nDisallow: /\n", "FooBot", "http://h/x", true, 0},
		{"token matching is case-insensitive",
			"User-agent: FOOBOT\nDisallow: /\n", "foobot", "http://h/x", false, 2},
		{"a group token is never a prefix of the crawler's",
			"User-agent: Foo\nDisallow: /\n", "FooBot", "http://h/x", true, 0},
		{"the crawler's token is never a prefix of a group's",
			"User-agent: FooBotExtended\nDisallow: /\n", "FooBot", "http://h/x", true, 0},
		{"a user-agent value is cut at its version",
			"User-agent: FooBot/1.2\nDisallow: /\n", "FooBot", "http://h/x", false, 2},
		{"a user-agent value is cut at a space",
			"User-agent: FooBot crawler\nDisallow: /\n", "FooBot", "http://h/x", false, 2},
		{"digits belong to the token (FAU tokens)",
			"User-agent: FAU-INF12-Bot\nDisallow: /\nUser-agent: FAU-INF\nAllow: /\n", "FAU-INF12-Bot", "http://h/x", false, 2},
		{"a * followed by text is not the global group",
			"User-agent: *bot\nDisallow: /\n", "FooBot", "http://h/x", true, 0},
		{"* with a trailing comment is the global group",
			"User-agent: * # everyone\nDisallow: /\n", "FooBot", "http://h/x", false, 2},
		{"an empty token (crawler) falls to *",
			"User-agent: *\nDisallow: /\n", "", "http://h/x", false, 2},
	})
}

// RFC 9309 §2.2: the line syntax.
func TestRFC9309_2_2_LineSyntax(t *testing.T) {
	body := "User-agent: FooBot\nDisallow: /x\nAllow: /x/y\n"
	variants := map[string]string{
		"LF":             body,
		"CRLF":           strings.ReplaceAll(body, "\n", "\r\n"),
		"CR":             strings.ReplaceAll(body, "\n", "\r"),
		"mixed":          "User-agent: FooBot\r\nDisallow: /x\rAllow: /x/y\n",
		"no final EOL":   strings.TrimSuffix(body, "\n"),
		"BOM":            "\xEF\xBB\xBF" + body,
		"partial BOM":    "\xEF\xBB" + body,
		"BOM+CRLF":       "\xEF\xBB\xBF" + strings.ReplaceAll(body, "\n", "\r\n"),
		"comments":       "# header\nUser-agent: FooBot # me\nDisallow: /x#comment\n  # indented comment\nAllow: /x/y\n",
		"missing colons": "User-agent FooBot\nDisallow /x\nAllow /x/y\n",
		"key case":       "USER-AGENT: FooBot\ndisALLOW: /x\nALLOW: /x/y\n",
		"typos":          "useragent: FooBot\ndisalow: /x\nallow: /x/y\n",
		"typos 2":        "user agent: FooBot\ndissallow: /x\nallow: /x/y\n",
		"whitespace":     "  User-agent :\tFooBot  \n\tDisallow:/x   \n Allow :  /x/y\n",
	}
	for name, robots := range variants {
		f := Parse([]byte(robots))
		check := func(path string, want bool) {
			u, _ := url.Parse("http://h" + path)
			if d := f.Decide("FooBot", u); d.Allowed != want || d.Line == 0 {
				t.Errorf("%s: %s allowed = %v by line %d, want %v decided by a rule; %s", name, path, d.Allowed, d.Line, want, d.Reason)
			}
		}
		check("/x/z", false)
		check("/x/y/z", true)
	}

	runDecideCases(t, []decideCase{
		{"a missing colon with a two-word value is not a record",
			"User-agent: FooBot\nDisallow /x y\n", "FooBot", "http://h/x", true, 0},
		{"the line number and text are kept",
			"# one\n\nUser-agent: FooBot\r\nDisallow: /x   # two\r\n", "FooBot", "http://h/x", false, 4},
		{"an unknown key is ignored", "User-agent: FooBot\nNoindex: /x\n", "FooBot", "http://h/x", true, 0},
	})
	d := Parse([]byte("User-agent: FooBot\n  Disallow: /x   # why\n")).Decide("FooBot", mustURL(t, "http://h/x"))
	if d.Rule != "Disallow: /x   # why" || d.Line != 2 {
		t.Errorf("deciding rule = line %d %q, want line 2 with its text as written", d.Line, d.Rule)
	}
}

// RFC 9309 §2.2.2: allow and disallow, longest match, encoding.
func TestRFC9309_2_2_2_Matching(t *testing.T) {
	runDecideCases(t, []decideCase{
		{"match from the first octet of the path",
			"User-agent: *\nDisallow: /x\n", "b", "http://h/a/x", true, 0},
		{"paths are case-sensitive", "User-agent: *\nDisallow: /X\n", "b", "http://h/x", true, 0},
		{"the query is part of the path", "User-agent: *\nDisallow: /s?q=\n", "b", "http://h/s?q=1", false, 2},
		{"longest match wins", "User-agent: *\nDisallow: /a\nAllow: /ab\n", "b", "http://h/abc", true, 3},
		{"allow wins a tie", "User-agent: *\nDisallow: /a\nAllow: /a\n", "b", "http://h/abc", true, 3},
		{"allow wins a tie, listed first", "User-agent: *\nAllow: /a\nDisallow: /a\n", "b", "http://h/abc", true, 2},
		{"tie between wildcard and literal of equal length", "User-agent: *\nDisallow: /a*c\nAllow: /abc\n", "b", "http://h/abcd", true, 3},
		{"an empty disallow matches nothing", "User-agent: *\nDisallow:\n", "b", "http://h/x", true, 0},
		{"/robots.txt is always allowed", "User-agent: *\nDisallow: /\n", "b", "http://h/robots.txt", true, 0},
		{"only /robots.txt itself", "User-agent: *\nDisallow: /\n", "b", "http://h/robots.txt.bak", false, 2},
		// §2.2.2's table, rows 1, 3, 4 and 5.
		{"table row 1: query as written", "User-agent: *\nDisallow: /\nAllow: /foo/bar?baz=quz\n", "b", "http://h/foo/bar?baz=quz", true, 3},
		{"table row 3: UTF-8 rule, encoded URL", "User-agent: *\nDisallow: /\nAllow: /foo/bar/ツ\n", "b", "http://h/foo/bar/%E3%83%84", true, 3},
		{"table row 3: UTF-8 rule, raw URL", "User-agent: *\nDisallow: /\nAllow: /foo/bar/ツ\n", "b", "http://h/foo/bar/ツ", true, 3},
		{"table row 4: encoded rule, encoded URL", "User-agent: *\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "b", "http://h/foo/bar/%E3%83%84", true, 3},
		{"table row 5: encoded unreserved rule, plain URL", "User-agent: *\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "b", "http://h/foo/bar/baz", true, 3},
		{"table row 5 reversed: plain rule, encoded URL", "User-agent: *\nDisallow: /\nAllow: /foo/bar/baz\n", "b", "http://h/foo/bar/%62%61%7a", true, 3},
		{"hex case does not matter", "User-agent: *\nDisallow: /\nAllow: /a%c3%a4\n", "b", "http://h/a%C3%A4", true, 3},
		{"an encoded reserved character is not the character", "User-agent: *\nDisallow: /a/b\n", "b", "http://h/a%2Fb", true, 0},
		{"raw UTF-8 in the query is encoded too", "User-agent: *\nDisallow: /s?q=ä\n", "b", "http://h/s?q=%C3%A4", false, 2},
		{"a space in a rule", "User-agent: *\nDisallow: /a b\n", "b", "http://h/a%20b", false, 2},
		{"a stray percent sign is literal", "User-agent: *\nDisallow: /100%\n", "b", "http://h/100%25", false, 2},
		{"encoded length counts: /ä (7 octets) beats /a%C3 prefix (5)", "User-agent: *\nDisallow: /a%C3\nAllow: /aä\n", "b", "http://h/a%C3%A4", true, 3},
	})
}

// RFC 9309 §2.2.3: special characters.
func TestRFC9309_2_2_3_SpecialCharacters(t *testing.T) {
	runDecideCases(t, []decideCase{
		{"* matches any sequence", "User-agent: *\nDisallow: /a*/c\n", "b", "http://h/a/x/y/c", false, 2},
		{"* matches the empty sequence", "User-agent: *\nDisallow: /a*b\n", "b", "http://h/ab", false, 2},
		{"* pieces must appear in order", "User-agent: *\nDisallow: /a*b*c\n", "b", "http://h/acb", true, 0},
		{"wildcards are anchored at the start", "User-agent: *\nDisallow: /x*.pdf\n", "b", "http://h/a/x.pdf", true, 0},
		{"$ anchors the end", "User-agent: *\nDisallow: /*.pdf$\n", "b", "http://h/a.pdf", false, 2},
		{"$ anchors the end (longer)", "User-agent: *\nDisallow: /*.pdf$\n", "b", "http://h/a.pdfx", true, 0},
		{"$ anchors after the query", "User-agent: *\nDisallow: /*.pdf$\n", "b", "http://h/a.pdf?x=1", true, 0},
		{"$ mid-pattern is literal", "User-agent: *\nDisallow: /a$b\n", "b", "http://h/a$b/c", false, 2},
		{"$ mid-pattern is not an anchor", "User-agent: *\nDisallow: /a$b\n", "b", "http://h/a", true, 0},
		{"%2A is a literal *", "User-agent: *\nDisallow: /a%2Ab\n", "b", "http://h/a*b", false, 2},
		{"%2A is not a wildcard", "User-agent: *\nDisallow: /a%2Ab\n", "b", "http://h/axb", true, 0},
		{"%24 at the end is a literal $", "User-agent: *\nDisallow: /a%24\n", "b", "http://h/a$x", false, 2},
		{"%24 at the end is not an anchor", "User-agent: *\nDisallow: /a%24\n", "b", "http://h/a", true, 0},
		{"repeated * behaves as one", "User-agent: *\nDisallow: /a***b$\n", "b", "http://h/a/x/b", false, 2},
		{"a lone * matches everything", "User-agent: *\nDisallow: *\n", "b", "http://h/anything", false, 2},
		{"greedy pieces still find a later match", "User-agent: *\nDisallow: /*ab*abc$\n", "b", "http://h/xabxxabababc", false, 2},
	})
}

// RFC 9309 §2.2.4: other records.
func TestRFC9309_2_2_4_OtherRecords(t *testing.T) {
	f := Parse([]byte("Sitemap: /sitemap.xml\n" +
		"User-agent: *\n" +
		"Crawl-delay: 2.5\n" +
		"Sitemap: https://h.example/sitemap.xml\n" +
		"Disallow: /x\n" +
		"sitemap: ftp://h.example/s.xml\n" +
		"Sitemap: https://other.example/s.xml#frag\n" +
		"Site-map: https://other.example/s.xml\n" +
		"Sitemap: http://[bad\n" +
		"User-agent: FooBot\n" +
		"Crawl-delay: soon\n" +
		"Crawl-delay: -1\n" +
		"Disallow: /y\n" +
		"User-agent: BarBot\n" +
		"Crawl-delay: 1\n" +
		"Disallow: /z\n" +
		"User-agent: barbot\n" +
		"Crawl-delay: 4\n"))
	base := mustURL(t, "https://h.example/robots.txt")
	want := []string{"https://h.example/sitemap.xml", "https://other.example/s.xml"}
	if got := f.Sitemaps(base); !reflect.DeepEqual(got, want) {
		t.Errorf("Sitemaps = %q, want %q", got, want)
	}
	if got := f.Sitemaps(nil); !reflect.DeepEqual(got, want) {
		t.Errorf("Sitemaps(nil) = %q, want %q (relative ones dropped)", got, want)
	}
	for _, c := range []struct {
		token string
		want  time.Duration
		ok    bool
	}{
		{"OtherBot", 2500 * time.Millisecond, true},
		{"FooBot", 0, false}, // bad values ignored; the * group does not apply to FooBot
		{"BarBot", 4 * time.Second, true},
	} {
		if d, ok := f.CrawlDelay(c.token); d != c.want || ok != c.ok {
			t.Errorf("CrawlDelay(%s) = %v, %v; want %v, %v", c.token, d, ok, c.want, c.ok)
		}
	}
	if len(f.Ignored) != 2 {
		t.Errorf("Ignored = %+v, want the two bad Crawl-delay lines", f.Ignored)
	}
	// A bad Crawl-delay never makes the file fail: FooBot's rule still applies.
	if d := f.Decide("FooBot", mustURL(t, "https://h.example/y")); d.Allowed {
		t.Errorf("FooBot /y allowed; the group's rule must survive bad Crawl-delay lines")
	}
}

// RFC 9309 §2.5: the parsing limit.
func TestRFC9309_2_5_Limit(t *testing.T) {
	head := "User-agent: *\nDisallow: /early\n"
	filler := strings.Repeat("# filler line to push the next rules past the limit\n", MaxBytes/50)
	body := head + filler + "Disallow: /late\n"
	f := Parse([]byte(body))
	if !f.Truncated {
		t.Fatalf("a %d-byte body is not reported as truncated", len(body))
	}
	if d := f.Decide("b", mustURL(t, "http://h/early")); d.Allowed {
		t.Errorf("a rule within the limit was lost")
	}
	if d := f.Decide("b", mustURL(t, "http://h/late")); !d.Allowed {
		t.Errorf("a rule beyond the limit was used")
	}

	// A rule cut by the limit is dropped rather than shortened into a broader rule.
	pad := strings.Repeat("#", MaxBytes-len(head)-len("Allow: /")-1) + "\n"
	cut := head + pad + "Allow: /early/but-only-this-page\n"
	if d := Parse([]byte(cut)).Decide("b", mustURL(t, "http://h/early")); d.Allowed {
		t.Errorf("the rule cut at the limit became %q", d.Rule)
	}
	if f := Parse([]byte(head)); f.Truncated {
		t.Errorf("a short body is reported as truncated")
	}
}

func TestFileNilAndEmpty(t *testing.T) {
	var f *File
	if d := f.Decide("b", mustURL(t, "http://h/x")); !d.Allowed {
		t.Errorf("a nil file disallowed: %s", d.Reason)
	}
	if d := Parse(nil).Decide("b", nil); !d.Allowed {
		t.Errorf("an empty file disallowed a nil URL: %s", d.Reason)
	}
	if got := f.String(); got != "" {
		t.Errorf("nil String = %q", got)
	}
	if _, ok := f.CrawlDelay("b"); ok {
		t.Errorf("nil file has a crawl-delay")
	}
	if f.Sitemaps(nil) != nil {
		t.Errorf("nil file has sitemaps")
	}
}

func TestStringRoundTrip(t *testing.T) {
	in := "\xEF\xBB\xBFdisallow: /before\r\nuser agent: FooBot/2.1 (+https://x)\r\n" +
		"user-agent: *\nCrawl-delay: 1.25\ndisalow /a*b$ # c\nallow:\nSitemap: /s.xml\n" +
		"User-agent: BarBot\nAllow: /x\nUser-agent: QuxBot\n"
	f := Parse([]byte(in))
	s := f.String()
	want := "User-agent: FooBot\nUser-agent: *\nCrawl-delay: 1.25\nDisallow: /a*b$\nAllow:\n\n" +
		"User-agent: BarBot\nAllow: /x\n\nUser-agent: QuxBot\n\nSitemap: /s.xml\n"
	if s != want {
		t.Errorf("String() =\n%s\nwant\n%s", s, want)
	}
	if s2 := Parse([]byte(s)).String(); s2 != s {
		t.Errorf("not stable:\n%s\nthen\n%s", s, s2)
	}
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("bad URL %q: %v", s, err)
	}
	return u
}
