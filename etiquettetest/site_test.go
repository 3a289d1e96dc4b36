package etiquettetest_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// get sends one request with the given header pairs and returns the answer with its body read.
func get(t *testing.T, method, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestAnswers(t *testing.T) {
	modified := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name       string
		answer     etiquettetest.Answer
		method     string
		header     []string
		wantStatus int
		wantHeader map[string]string
		wantBody   []string // substrings
	}{
		{name: "text", answer: etiquettetest.Text("User-agent: *\n"), wantStatus: 200,
			wantHeader: map[string]string{"Content-Type": "text/plain; charset=utf-8"}, wantBody: []string{"User-agent: *"}},
		{name: "status", answer: etiquettetest.Status(503), wantStatus: 503, wantBody: []string{"Service Unavailable"}},
		{name: "redirect", answer: etiquettetest.Redirect(301, "http://127.0.0.1:1/there"), wantStatus: 301,
			wantHeader: map[string]string{"Location": "http://127.0.0.1:1/there"}},
		{name: "retry-after rounds up to whole seconds", answer: etiquettetest.Status(429).RetryAfter(1500 * time.Millisecond), wantStatus: 429,
			wantHeader: map[string]string{"Retry-After": "2"}},
		{name: "etag, unconditional", answer: etiquettetest.Text("v1").ETag("v1"), wantStatus: 200,
			wantHeader: map[string]string{"ETag": `"v1"`}, wantBody: []string{"v1"}},
		{name: "etag, matching If-None-Match", answer: etiquettetest.Text("v1").ETag("v1"), header: []string{"If-None-Match", `"v1"`}, wantStatus: 304,
			wantHeader: map[string]string{"ETag": `"v1"`}},
		{name: "etag, other If-None-Match", answer: etiquettetest.Text("v1").ETag("v1"), header: []string{"If-None-Match", `"v0"`}, wantStatus: 200},
		{name: "weak etag kept as written", answer: etiquettetest.Text("v1").ETag(`W/"v1"`), header: []string{"If-None-Match", `W/"v1"`}, wantStatus: 304},
		{name: "last-modified, matching If-Modified-Since", answer: etiquettetest.Text("x").LastModified(modified),
			header: []string{"If-Modified-Since", modified.Format(http.TimeFormat)}, wantStatus: 304},
		{name: "last-modified, older If-Modified-Since", answer: etiquettetest.Text("x").LastModified(modified),
			header: []string{"If-Modified-Since", modified.Add(-time.Hour).Format(http.TimeFormat)}, wantStatus: 200,
			wantHeader: map[string]string{"Last-Modified": modified.Format(http.TimeFormat)}},
		{name: "cookies", answer: etiquettetest.Text("x").SetCookie(etiquettetest.SessionCookie()), wantStatus: 200,
			wantHeader: map[string]string{"Set-Cookie": "PHPSESSID=k2v9d8s7f6; Path=/; HttpOnly"}},
		{name: "html page with links and an alternate", answer: etiquettetest.HTMLPage("Home", "/a", "http://127.0.0.1:1/b").Alternate("application/rss+xml", "/feed"),
			wantStatus: 200, wantHeader: map[string]string{"Content-Type": "text/html; charset=utf-8"},
			wantBody: []string{"<title>Home</title>", `<a href="/a">`, `<a href="http://127.0.0.1:1/b">`, `<link rel="alternate" type="application/rss+xml" href="/feed">`}},
		{name: "alternate of a non-HTML answer is a Link header", answer: etiquettetest.Text("x").Alternate("text/markdown", "/x.md"), wantStatus: 200,
			wantHeader: map[string]string{"Link": `</x.md>; rel="alternate"; type="text/markdown"`}},
		{name: "sitemap", answer: etiquettetest.Sitemap("http://127.0.0.1:1/a"), wantStatus: 200,
			wantBody: []string{`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`, "<loc>http://127.0.0.1:1/a</loc>"}},
		{name: "sitemap index", answer: etiquettetest.SitemapIndex("http://127.0.0.1:1/s.xml.gz"), wantStatus: 200,
			wantBody: []string{"<sitemapindex", "<sitemap>", "<loc>http://127.0.0.1:1/s.xml.gz</loc>"}},
		{name: "rss", answer: etiquettetest.RSS("News", "http://127.0.0.1:1/a"), wantStatus: 200,
			wantHeader: map[string]string{"Content-Type": "application/rss+xml"}, wantBody: []string{`<rss version="2.0">`, "<link>http://127.0.0.1:1/a</link>"}},
		{name: "llms.txt", answer: etiquettetest.LLMsTxt("Example", "/a"), wantStatus: 200, wantBody: []string{"# Example\n", "- [/a](/a)\n"}},
		{name: "wordpress listing", answer: etiquettetest.WordPressPosts("http://127.0.0.1:1/a", "http://127.0.0.1:1/b"), wantStatus: 200,
			wantHeader: map[string]string{"X-WP-Total": "2", "X-WP-TotalPages": "1"}, wantBody: []string{`"link":"http://127.0.0.1:1/b"`}},
		{name: "HEAD has no body", answer: etiquettetest.Text("body"), method: http.MethodHead, wantStatus: 200},
		{name: "zero answer is an empty 200", answer: etiquettetest.Answer{}, wantStatus: 200},
		{name: "a status that is not final is a 500 that says so", answer: etiquettetest.Status(42), wantStatus: 500, wantBody: []string{"Status(42) is not a final HTTP status"}},
		{name: "a chain of no hops is its final answer", answer: etiquettetest.RedirectChain(0, etiquettetest.Text("final")), wantStatus: 200, wantBody: []string{"final"}},
		{name: "a nil cookie and a negative Retry-After", answer: etiquettetest.Status(503).SetCookie(nil).RetryAfter(-time.Second), wantStatus: 503,
			wantHeader: map[string]string{"Set-Cookie": "", "Retry-After": "0"}},
	}
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/" + strings.ReplaceAll(tt.name, " ", "-")
			o.Serve(path, tt.answer)
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			resp, body := get(t, method, o.URL+path, tt.header...)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			for k, v := range tt.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			for _, want := range tt.wantBody {
				if !strings.Contains(body, want) {
					t.Errorf("body lacks %q:\n%s", want, body)
				}
			}
			if method == http.MethodHead && body != "" {
				t.Errorf("HEAD answered with a body: %q", body)
			}
			rec := o.Requests()
			last := rec[len(rec)-1]
			if last.Status != tt.wantStatus || last.NotModified() != (tt.wantStatus == 304) {
				t.Errorf("recorded status %d (not modified %v), want %d", last.Status, last.NotModified(), tt.wantStatus)
			}
		})
	}
}

func TestGzippedSitemapIsAFile(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	o.Serve("/sitemap.xml.gz", etiquettetest.Sitemap(o.URL+"/a").Gzipped())
	resp, body := get(t, http.MethodGet, o.URL+"/sitemap.xml.gz")
	if ct := resp.Header.Get("Content-Type"); ct != "application/gzip" || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("Content-Type %q, Content-Encoding %q: want a gzip file", ct, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plain), "<loc>"+o.URL+"/a</loc>") {
		t.Errorf("unzipped sitemap lacks the URL:\n%s", plain)
	}
}

func TestWordPressListingIsJSON(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/wp-json/wp/v2/posts", etiquettetest.WordPressPosts("http://x/a"))
	_, body := get(t, http.MethodGet, o.URL+"/wp-json/wp/v2/posts")
	var posts []struct {
		ID    int    `json:"id"`
		Link  string `json:"link"`
		Title struct {
			Rendered string `json:"rendered"`
		} `json:"title"`
	}
	if err := json.Unmarshal([]byte(body), &posts); err != nil || len(posts) != 1 || posts[0].ID != 1 || posts[0].Link != "http://x/a" {
		t.Fatalf("posts %+v, err %v", posts, err)
	}
}

func TestNthAnswersOnlyThatRequest(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Page("/p", "P").Nth("/p", 2, etiquettetest.Status(429).RetryAfter(time.Second))
	var got []int
	for range 3 {
		resp, _ := get(t, http.MethodGet, o.URL+"/p?any=query")
		got = append(got, resp.StatusCode)
	}
	if want := []int{200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

func TestUnknownPathsAnswer404UnlessOtherwise(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	if resp, _ := get(t, http.MethodGet, o.URL+"/robots.txt"); resp.StatusCode != 404 {
		t.Errorf("robots.txt of an origin without one: %d, want 404", resp.StatusCode)
	}
	o.Otherwise(etiquettetest.HTMLPage("anything"))
	if resp, _ := get(t, http.MethodGet, o.URL+"/p/7"); resp.StatusCode != 200 {
		t.Errorf("with Otherwise: %d, want 200", resp.StatusCode)
	}
}

func TestRedirectChainStaysOnThePath(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/robots.txt", etiquettetest.RedirectChain(2, etiquettetest.Text("User-agent: *\nDisallow: /\n")))
	resp, err := http.Get(o.URL + "/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var targets []string
	for _, r := range o.Requests() {
		targets = append(targets, r.Target)
	}
	if want := []string{"/robots.txt", "/robots.txt?hop=1", "/robots.txt?hop=2"}; strings.Join(targets, " ") != strings.Join(want, " ") || resp.StatusCode != 200 {
		t.Errorf("targets %v (final %d), want %v then 200", targets, resp.StatusCode, want)
	}
}

func TestRecordingAndMarks(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	a, b := site.NewOrigin().Page("/", "A"), site.NewOrigin().Serve("/away", etiquettetest.Redirect(302, "/"))
	get(t, http.MethodGet, a.URL+"/?q=1", "User-Agent", "ExampleBot/1.0", "Cookie", "x=1")
	mark := site.Mark()
	get(t, http.MethodGet, b.URL+"/away")
	all, since := site.Requests(), site.Since(mark)
	if len(all) != 2 || len(since) != 1 || since[0].Origin != b.URL || len(a.Requests()) != 1 {
		t.Fatalf("all %v, since mark %v", all, since)
	}
	first := all[0]
	switch {
	case first.Origin != a.URL || first.Method != "GET" || first.Target != "/?q=1" || first.Path() != "/":
		t.Errorf("request line: %+v", first)
	case first.Header.Get("User-Agent") != "ExampleBot/1.0" || first.Header.Get("Cookie") != "x=1" || first.Header.Get("Host") != a.Addr():
		t.Errorf("headers: %v", first.Header)
	case first.Status != 200 || first.Answer.Get("Content-Type") != "text/html; charset=utf-8":
		t.Errorf("answer: %d %v", first.Status, first.Answer)
	case first.Done.Before(first.At) || all[1].At.Before(first.Done) || first.RemoteAddr == "":
		t.Errorf("times: at %v done %v, next at %v; remote %q", first.At, first.Done, all[1].At, first.RemoteAddr)
	case first.HostPort() != a.Addr():
		t.Errorf("host:port %q, want %q", first.HostPort(), a.Addr())
	case since[0].Status != 302 || since[0].Answer.Get("Location") != "/":
		t.Errorf("redirect recorded as %d %v", since[0].Status, since[0].Answer)
	}
	all[0].Header.Set("User-Agent", "changed")
	if site.Requests()[0].Header.Get("User-Agent") != "ExampleBot/1.0" {
		t.Error("changing a returned Request changed the recording")
	}
	if got := site.Since(site.Mark()); len(got) != 0 {
		t.Errorf("since the latest mark: %v", got)
	}
}

func TestRecordingRemembersWellKnownMentions(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	o.Page("/", "Home", "/.well-known/security.txt", "https://elsewhere.example/.well-known/x?y#z")
	o.Serve("/go", etiquettetest.Redirect(302, "/.well-known/change-password"))
	get(t, http.MethodGet, o.URL+"/")
	get(t, http.MethodGet, o.URL+"/go")
	get(t, http.MethodHead, o.URL+"/")
	rec := site.Requests()
	want := [][]string{
		{o.URL + "/.well-known/security.txt", o.URL + "/.well-known/security.txt", "https://elsewhere.example/.well-known/x", "https://elsewhere.example/.well-known/x"},
		{o.URL + "/.well-known/change-password"},
		nil, // a HEAD answer has no body to mention anything
	}
	for i, r := range rec {
		if strings.Join(r.WellKnown, " ") != strings.Join(want[i], " ") {
			t.Errorf("%s: mentions %q, want %q", r.Target, r.WellKnown, want[i])
		}
	}
}

func TestHeldAnswerWaitsForItsRelease(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	release := make(chan struct{})
	o := site.NewOrigin().Serve("/slow", etiquettetest.Text("finally").HoldUntil(release))
	done := make(chan string)
	go func() {
		resp, err := http.Get(o.URL + "/slow")
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	if err := site.Await(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if r := site.Requests()[0]; r.Status != 0 || !r.Done.IsZero() {
		t.Errorf("a held request is recorded as answered: %d at %v", r.Status, r.Done)
	}
	close(release)
	if got := <-done; got != "finally" {
		t.Errorf("after release: %q", got)
	}
	if r := site.Requests()[0]; r.Status != 200 || r.Done.IsZero() {
		t.Errorf("after release recorded as %d at %v", r.Status, r.Done)
	}
}

func TestCloseEndsHangingAnswersWithoutAnAnswer(t *testing.T) {
	site := etiquettetest.NewSite()
	o := site.NewOrigin().Serve("/robots.txt", etiquettetest.Text("never sent").HoldUntil(nil))
	errc := make(chan error)
	go func() {
		resp, err := http.Get(o.URL + "/robots.txt")
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	if err := site.Await(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	site.Close()
	if err := <-errc; err == nil {
		t.Error("a hanging answer ended by Close reached the client as an answer")
	}
	if r := site.Requests()[0]; r.Status != 0 || r.Done.IsZero() {
		t.Errorf("recorded as %d at %v; want no answer, done", r.Status, r.Done)
	}
	if err := site.Await(context.Background(), 2); !errors.Is(err, etiquettetest.ErrClosed) {
		t.Errorf("Await on a closed site: %v", err)
	}
	site.Close()
	if late := site.NewOrigin(); late.URL == "" {
		t.Error("NewOrigin after Close returned no URL")
	} else if _, err := http.Get(late.URL); err == nil {
		t.Error("an origin added after Close answered")
	}
}

func TestDelayedAnswerTakesAtLeastItsDelay(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/slow", etiquettetest.Text("x").Delay(200*time.Millisecond))
	get(t, http.MethodGet, o.URL+"/slow")
	r := site.Requests()[0]
	if took := r.Done.Sub(r.At); took < 200*time.Millisecond || r.Status != 200 {
		t.Errorf("answered %d after %v, want 200 after at least 200ms", r.Status, took)
	}
}

func TestClientGivingUpEndsTheHold(t *testing.T) {
	site := etiquettetest.NewSite()
	o := site.NewOrigin().Serve("/hang", etiquettetest.Text("x").HoldUntil(nil))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.URL+"/hang", nil)
		_, err := http.DefaultClient.Do(req)
		errc <- err
	}()
	if err := site.Await(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-errc
	site.Close() // waits for the handler to return
	if r := site.Requests()[0]; r.Status != 0 || r.Done.IsZero() {
		t.Errorf("recorded as %d at %v; want no answer, done", r.Status, r.Done)
	}
}
