package extensions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/proxy"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
)

// warnings is a logger that keeps what a user sees with no logger configured (Warn and above),
// one record a line.
type warnings struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *warnings) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *warnings) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Split(strings.TrimSpace(w.buf.String()), "\n")[:strings.Count(w.buf.String(), "\n")]
}

func (w *warnings) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// A proxy set on the collector before Polite (SetProxy/SetProxyFunc write Colly's transport)
// still carries every request — robots.txt and the page — instead of the door going direct, and
// the response still names the proxy it came through.
func TestPoliteCarriesAProxySetBefore(t *testing.T) {
	var mu sync.Mutex
	var proxied []string
	proxyServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		proxied = append(proxied, r.URL.String()) // a proxied request names the whole URL
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "via proxy")
	}))
	defer proxyServer.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("%s reached the site directly, not through the proxy", r.URL.Path)
	}))
	defer site.Close()

	// Colly's proxy_switcher example: a switcher, and the proxy each response came through.
	switcher, err := proxy.RoundRobinProxySwitcher(proxyServer.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := colly.NewCollector()
	c.SetProxyFunc(switcher)
	if err := extensions.Polite(c, fastPolicy(t, site, nil)); err != nil {
		t.Fatal(err)
	}
	var body, via string
	c.OnResponse(func(r *colly.Response) { body, via = string(r.Body), r.Request.ProxyURL })
	if err := c.Visit(site.URL + "/page"); err != nil {
		t.Fatal(err)
	}
	if body != "via proxy" {
		t.Errorf("the page read %q, want the proxy's answer", body)
	}
	if via != proxyServer.URL {
		t.Errorf("r.Request.ProxyURL is %q, want %q", via, proxyServer.URL)
	}
	if want := []string{site.URL + "/robots.txt", site.URL + "/page"}; fmt.Sprint(proxied) != fmt.Sprint(want) {
		t.Errorf("the proxy saw %q, want %q", proxied, want)
	}
}

// A proxy on the collector and another in Policy.Proxy: Polite cannot tell two functions apart,
// so it refuses, naming both, and the collector sends nothing.
func TestPoliteRefusesTwoProxies(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("%s reached the site after Polite refused", r.URL.Path)
	}))
	defer site.Close()
	c := colly.NewCollector()
	if err := c.SetProxy("http://127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	p := fastPolicy(t, site, nil)
	p.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: "127.0.0.1:2"})
	err := extensions.Polite(c, p)
	if err == nil || !strings.Contains(err.Error(), "SetProxy") || !strings.Contains(err.Error(), "Policy.Proxy") {
		t.Fatalf("Polite = %v, want an error naming SetProxy and Policy.Proxy", err)
	}
	if c.Visit(site.URL+"/") == nil {
		t.Error("the collector sent after Polite refused")
	}
}

// SetRequestTimeout before Polite bounds the exchange: a page slower than it fails with a
// deadline error instead of succeeding under the door's 30 s.
func TestPoliteCarriesARequestTimeoutSetBefore(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	release := make(chan struct{})
	defer close(release)
	o := site.NewOrigin().Serve("/slow", etiquettetest.Text("late").HoldUntil(release))
	c := colly.NewCollector()
	c.SetRequestTimeout(300 * time.Millisecond)
	if err := extensions.Polite(c, fastPolicyAt(t, o.Addr(), nil)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := c.Visit(o.URL + "/slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Visit of a page that never answers = %v, want a deadline error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the timeout took %s, want about 300 ms", took)
	}
}

// colly.MaxBodySize before Polite caps the body the door reads: a 300 KB page with a 1 KiB
// MaxBodySize is an error naming MaxBodySize, not 300 KB delivered.
func TestPoliteCarriesMaxBodySize(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/big", etiquettetest.Text(strings.Repeat("x", 300<<10)).ContentType("text/html"))
	c := colly.NewCollector(colly.MaxBodySize(1024))
	if err := extensions.Polite(c, fastPolicyAt(t, o.Addr(), nil)); err != nil {
		t.Fatal(err)
	}
	delivered := -1
	c.OnResponse(func(r *colly.Response) { delivered = len(r.Body) })
	err := c.Visit(o.URL + "/big")
	if delivered != -1 {
		t.Errorf("%d bytes delivered to OnResponse, want an error at 1024", delivered)
	}
	if !errors.Is(err, politeness.ErrBodyTooLarge) || !strings.Contains(err.Error(), "MaxBodySize") {
		t.Errorf("Visit = %v, want a body-too-large error naming MaxBodySize", err)
	}
}

// colly.CacheDir before Polite is where the door's cache lives: the directory is created, and a
// second collector with the same CacheDir is answered from it without asking the site.
func TestPoliteCarriesCacheDir(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/page", etiquettetest.Text("cached").Header("Cache-Control", "max-age=3600"))
	dir := filepath.Join(t.TempDir(), "x")
	for range 2 {
		c := colly.NewCollector(colly.CacheDir(dir))
		p := fastPolicyAt(t, o.Addr(), nil)
		p.NoCache = false
		if err := extensions.Polite(c, p); err != nil {
			t.Fatal(err)
		}
		if err := c.Visit(o.URL + "/page"); err != nil {
			t.Fatal(err)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Fatalf("CacheDir %s holds %v (%v), want the door's cache", dir, entries, err)
	}
	if n := strings.Count(fmt.Sprint(etiquettetest.Paths(o.Requests())), "/page"); n != 1 {
		t.Errorf("the site was asked for /page %d times, want once (the second from CacheDir)", n)
	}
}

// CacheDir and a Policy that says otherwise about the cache cannot both hold: Polite says which
// to drop.
func TestPoliteRefusesCacheDirWithAnotherCache(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		set        func(*politeness.Policy)
	}{
		{"NoCache", "Policy.NoCache", func(p *politeness.Policy) { p.NoCache = true }},
		{"CacheStore", "Policy.CacheStore", func(p *politeness.Policy) { p.NoCache, p.CacheStore = false, cache.NewMemoryStore(0) }},
		{"user-triggered", "c.CacheDir", func(p *politeness.Policy) { p.NoCache, p.Mode = false, politeness.UserTriggered }},
		{"MinRevisit", "Policy.MinRevisit", func(p *politeness.Policy) { p.NoCache, p.MinRevisit = false, 2*time.Hour }},
	} {
		c := colly.NewCollector(colly.CacheDir(t.TempDir()), colly.CacheExpiration(time.Hour))
		p := fastPolicyAt(t, "127.0.0.1:1", nil)
		tc.set(&p)
		err := extensions.Polite(c, p)
		if err == nil || !strings.Contains(err.Error(), "Cache") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Polite = %v, want an error naming the collector's cache setting and %s", tc.name, err, tc.want)
		}
	}
}

// Cookies already in Colly's jar would not be sent through the door: Polite names them and the
// Policy field that would keep such cookies, and proceeds once the scraper chose.
func TestPoliteRefusesCookiesAlreadyInTheJar(t *testing.T) {
	c := colly.NewCollector()
	if err := c.SetCookies("https://shop.example/", []*http.Cookie{{Name: "PHPSESSID", Value: "s", Path: "/"}}); err != nil {
		t.Fatal(err)
	}
	p := fastPolicyAt(t, "127.0.0.1:1", nil)
	err := extensions.Polite(c, p)
	if err == nil || !strings.Contains(err.Error(), "PHPSESSID") || !strings.Contains(err.Error(), "Policy.Cookies") {
		t.Fatalf("Polite = %v, want an error naming PHPSESSID and Policy.Cookies", err)
	}
	c.DisableCookies()
	if err := extensions.Polite(c, p); err != nil {
		t.Errorf("after DisableCookies, Polite = %v", err)
	}
}

// A transport the scraper set with WithTransport before Polite cannot sit below the door: Polite
// refuses and says what to pass instead, rather than dropping it.
func TestPoliteRefusesAForeignTransportSetBefore(t *testing.T) {
	c := colly.NewCollector()
	c.WithTransport(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("unused") }))
	err := extensions.Polite(c, fastPolicyAt(t, "127.0.0.1:1", nil))
	if err == nil || !strings.Contains(err.Error(), "Policy.BaseTransport") {
		t.Fatalf("Polite = %v, want an error naming Policy.BaseTransport", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
