package politeness

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/politeness/events"
)

func TestCookieLayer(t *testing.T) {
	setCookies := func(values ...string) func(*http.Request) *http.Response {
		return func(req *http.Request) *http.Response {
			return &http.Response{StatusCode: 200, Header: http.Header{"Set-Cookie": values}, Body: http.NoBody, Request: req}
		}
	}
	session, err := cookies.NewJar(cookies.Purpose{Categories: []cookies.Category{cookies.Session}}, cookies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		jar         *cookies.Jar
		url         string
		sent        []string // Cookie header lines from above
		setCookie   []string // the site's Set-Cookie lines
		wantCookie  []string // Cookie header lines that went down
		wantRefused []string // Notice details
	}{
		{name: "stateless: every Cookie from above is removed",
			url: "https://a.example/", sent: []string{"tracking=1", "PHPSESSID=x"}},
		{name: "stateless: every Set-Cookie is refused and counted by category",
			url: "https://a.example/", setCookie: []string{"_ga=GA1.2.3", "PHPSESSID=abc"},
			wantRefused: []string{"analytics: _ga", "session: PHPSESSID"}},
		{name: "with a purpose: the session cookie is kept",
			jar: session, url: "https://a.example/login", setCookie: []string{"PHPSESSID=abc; Path=/", "_ga=GA1.2.3"}},
		{name: "with a purpose: only the jar's cookie for this origin goes down",
			jar: session, url: "https://a.example/next", sent: []string{"tracking=1"}, wantCookie: []string{"PHPSESSID=abc"}},
		{name: "with a purpose: another origin gets nothing",
			jar: session, url: "http://a.example:8080/", wantCookie: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &recorder{answer: setCookies(tt.setCookie...)}
			sink := &eventLog{}
			req, _ := http.NewRequest(http.MethodGet, tt.url, nil)
			for _, c := range tt.sent {
				req.Header.Add("Cookie", c)
			}
			cd := newCookieDoor(tt.jar, sink)
			resp, err := cd.requests(cd.responses(next)).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := next.last().Header.Values("Cookie"); !slices.Equal(got, tt.wantCookie) {
				t.Errorf("Cookie sent %q, want %q", got, tt.wantCookie)
			}
			if got := resp.Header.Values("Set-Cookie"); len(got) != 0 {
				t.Errorf("Set-Cookie %q reached the layers above", got)
			}
			var refused []string
			for _, e := range sink.of(events.Notice) {
				if e.Reason == cookieRefused && tt.jar == nil {
					refused = append(refused, e.Detail)
				}
			}
			if !slices.Equal(refused, tt.wantRefused) {
				t.Errorf("refusals %q, want %q", refused, tt.wantRefused)
			}
			if len(tt.sent) > 0 && len(req.Header.Values("Cookie")) != len(tt.sent) {
				t.Error("the caller's request was modified")
			}
		})
	}
	u, _ := url.Parse("https://a.example/")
	if got := session.Cookies(u); len(got) != 1 || got[0].Name != "PHPSESSID" {
		t.Errorf("the jar holds %v, want only the session cookie", got)
	}
}

// FuzzMalformedName: the name a Notice gives an unparsable Set-Cookie line is short printable
// ASCII, whatever the line.
func FuzzMalformedName(f *testing.F) {
	for _, s := range []string{`prefs={"a":1}`, "=x", "", "a b=c", "\x00=1", strings.Repeat("n", 100) + "=v", "ä=1; Path=/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		n := malformedName(line)
		if n == "" || len(n) > 64 || strings.IndexFunc(n, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
			t.Fatalf("malformedName(%q) = %q", line, n)
		}
	})
}
