package cookies

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// parseSetCookies reads Set-Cookie lines the way an http.Client does.
func parseSetCookies(lines ...string) []*http.Cookie {
	return (&http.Response{Header: http.Header{"Set-Cookie": lines}}).Cookies()
}

func names(cs []*http.Cookie) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// siteCookies is what the behavioural specs' site sets: trackers, consent, anti-bot, login, a
// session, a load balancer and one name nobody knows.
var siteCookies = []string{
	"_ga=GA1.1.1", "_ga_ABC123=GS1.1", "_gid=GA1.2", "_fbp=fb.1", "OptanonConsent=isGpcEnabled=0",
	"CookieConsent={necessary:true}", "euconsent-v2=CPabc", "cf_clearance=abc", "wordpress_logged_in_x=admin",
	"PHPSESSID=s1; Path=/; HttpOnly", "AWSALB=lb1; Path=/", "myapp_state=42; Path=/",
}

func TestJarPolicy(t *testing.T) {
	const site = "http://www.example.com/shop/page"
	allTrackers := map[string]int{"analytics": 3, "marketing": 1, "consent": 3, "anti-bot": 1, "login": 1}
	with := func(extra map[string]int) map[string]int {
		m := maps.Clone(allTrackers)
		maps.Copy(m, extra)
		return m
	}
	tests := []struct {
		name    string
		purpose Purpose
		url     string
		set     []string
		get     string // URL to read back; "" = url
		kept    []string
		refused map[string]int
	}{
		{"empty purpose keeps nothing", Purpose{}, site, siteCookies, "",
			nil, with(map[string]int{"session": 1, "loadbalancer": 1, "unknown": 1})},
		{"session and loadbalancer keep exactly those", Purpose{Categories: []Category{Session, LoadBalancer}}, site, siteCookies, "",
			[]string{"AWSALB", "PHPSESSID"}, with(map[string]int{"unknown": 1})},
		{"an allow-listed unknown name is kept", Purpose{Categories: []Category{Session}, Allow: []string{"myapp_state"}}, site, siteCookies, "",
			[]string{"PHPSESSID", "myapp_state"}, with(map[string]int{"loadbalancer": 1})},
		{"an allow-list prefix", Purpose{Allow: []string{"myapp_*"}}, site, []string{"myapp_a=1", "myapp_b=2", "other=3"}, "",
			[]string{"myapp_a", "myapp_b"}, map[string]int{"unknown": 1}},
		{"an allow-list prefix cannot reach never-kept cookies", Purpose{Allow: []string{"_ga*", "cf_*"}}, site, []string{"_ga_X=1", "_ga=1", "cf_clearance=2"}, "",
			nil, map[string]int{"analytics": 2, "anti-bot": 1}},
		{"csrf only with its class", Purpose{Categories: []Category{CSRF}}, site, []string{"csrftoken=t", "PHPSESSID=s"}, "",
			[]string{"csrftoken"}, map[string]int{"session": 1}},
		{"a cookie the data files as Functional needs the allow list", Purpose{Categories: []Category{Session}}, site, []string{"wp-settings-1=x"}, "",
			nil, map[string]int{"functional": 1}},
		{"Partitioned is refused", Purpose{Categories: []Category{Session}}, "https://www.example.com/", []string{"PHPSESSID=s; Secure; Partitioned"}, "",
			nil, map[string]int{"partitioned": 1}},
		{"a Domain of another site is refused", Purpose{Categories: []Category{Session}}, site, []string{"PHPSESSID=s; Domain=example.org"}, "",
			nil, map[string]int{"foreign-domain": 1}},
		{"a public-suffix Domain is refused", Purpose{Categories: []Category{Session}}, site, []string{"PHPSESSID=s; Domain=com"}, "",
			nil, map[string]int{"foreign-domain": 1}},
		{"a sibling host's Domain is refused", Purpose{Categories: []Category{Session}}, site, []string{"PHPSESSID=s; Domain=api.example.com"}, "",
			nil, map[string]int{"foreign-domain": 1}},
		{"the site's own parent Domain is kept", Purpose{Categories: []Category{Session}}, site, []string{"PHPSESSID=s; Domain=.example.com; Path=/"}, "",
			[]string{"PHPSESSID"}, nil},
		{"SameSite=None on an allow-listed unknown is refused", Purpose{Allow: []string{"myapp_state"}}, site, []string{"myapp_state=1; SameSite=None; Secure"}, "https://www.example.com/",
			nil, map[string]int{"samesite-none": 1}},
		{"SameSite=None on a known class is kept", Purpose{Categories: []Category{LoadBalancer}}, "https://www.example.com/", []string{"AWSALBCORS=1; SameSite=None; Secure"}, "",
			[]string{"AWSALBCORS"}, nil},
		{"__Host- without Secure is refused", Purpose{Allow: []string{"__Host-id"}}, "https://www.example.com/", []string{"__Host-id=1; Path=/"}, "",
			nil, map[string]int{"bad-prefix": 1}},
		{"__Host- done right is kept", Purpose{Allow: []string{"__Host-id"}}, "https://www.example.com/", []string{"__Host-id=1; Path=/; Secure"}, "",
			[]string{"__Host-id"}, nil},
		{"__Secure- over http is refused", Purpose{Categories: []Category{Session}}, site, []string{"__Secure-PHPSESSID=1; Secure"}, "",
			nil, map[string]int{"bad-prefix": 1}},
		{"an oversized cookie is refused", Purpose{Allow: []string{"big"}}, site, []string{"big=" + strings.Repeat("x", MaxCookieSize)}, "",
			nil, map[string]int{"too-large": 1}},
		{"a Secure cookie is not sent over http", Purpose{Categories: []Category{Session}}, "https://www.example.com/", []string{"PHPSESSID=s; Secure"}, "http://www.example.com/",
			nil, nil},
		{"a Path is honoured", Purpose{Categories: []Category{Session}}, site, []string{"PHPSESSID=s; Path=/shop"}, "http://www.example.com/blog",
			nil, nil},
		{"a URL without an http(s) origin keeps nothing", Purpose{Categories: []Category{Session}}, "ftp://www.example.com/", []string{"PHPSESSID=s"}, "",
			nil, map[string]int{"no-origin": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := NewJar(tt.purpose, Options{})
			if err != nil {
				t.Fatal(err)
			}
			j.SetCookies(mustURL(t, tt.url), parseSetCookies(tt.set...))
			get := tt.get
			if get == "" {
				get = tt.url
			}
			if got := names(j.Cookies(mustURL(t, get))); !slices.Equal(got, tt.kept) {
				t.Errorf("kept %q, want %q", got, tt.kept)
			}
			if got := j.Refused(); !maps.Equal(got, tt.refused) && !(len(got) == 0 && len(tt.refused) == 0) {
				t.Errorf("refused %v, want %v", got, tt.refused)
			}
		})
	}
}

func TestJarOriginIsolation(t *testing.T) {
	j, err := NewJar(Purpose{Categories: []Category{Session, LoadBalancer}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	j.SetCookies(mustURL(t, "http://127.0.0.1:8080/"), parseSetCookies("PHPSESSID=a; Path=/"))
	j.SetCookies(mustURL(t, "http://www.example.com/"), parseSetCookies("AWSALB=b; Domain=example.com; Path=/"))
	tests := []struct {
		url  string
		want []string
	}{
		{"http://127.0.0.1:8080/any/page", []string{"PHPSESSID"}},
		{"http://127.0.0.1:8081/", nil},  // same host, other port
		{"https://127.0.0.1:8080/", nil}, // same host and port, other scheme
		{"http://127.0.0.1/", nil},       // default port
		{"http://www.example.com/x", []string{"AWSALB"}},
		{"http://api.example.com/", nil},  // inside the cookie's Domain, but another origin
		{"https://www.example.com/", nil}, // other scheme
		{"mailto:x@example.com", nil},
	}
	for _, tt := range tests {
		if got := names(j.Cookies(mustURL(t, tt.url))); !slices.Equal(got, tt.want) {
			t.Errorf("Cookies(%s) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// fakeClock is the jar's injected time.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestJarSessionDowngradeAndLifetimeCap(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		setCookie string
		alive     time.Duration // still returned just before this
	}{
		{"a year-long Max-Age is capped", "PHPSESSID=s; Max-Age=31536000", 10 * time.Minute},
		{"a far Expires is capped", "PHPSESSID=s; Expires=Wed, 01 Jan 2031 00:00:00 GMT", 10 * time.Minute},
		{"a session cookie is capped", "PHPSESSID=s", 10 * time.Minute},
		{"a shorter Max-Age is kept", "PHPSESSID=s; Max-Age=60", time.Minute},
		{"a shorter Expires is kept", "PHPSESSID=s; Expires=Mon, 30 Nov 2026 12:02:00 GMT", 2 * time.Minute},
	}
	u := mustURL(t, "http://example.com/")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{start}
			j, err := NewJar(Purpose{Categories: []Category{Session}}, Options{Now: clk.now, MaxLifetime: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			j.SetCookies(u, parseSetCookies(tt.setCookie))
			clk.advance(tt.alive - time.Second)
			if got := names(j.Cookies(u)); !slices.Equal(got, []string{"PHPSESSID"}) {
				t.Fatalf("at %v: %q, want the cookie", tt.alive-time.Second, got)
			}
			clk.advance(time.Second)
			if got := j.Cookies(u); len(got) != 0 {
				t.Fatalf("at %v: %q, want it gone", tt.alive, names(got))
			}
		})
	}
}

func TestJarServerDeletesAKeptCookie(t *testing.T) {
	u := mustURL(t, "http://example.com/")
	j, _ := NewJar(Purpose{Categories: []Category{Session}}, Options{})
	j.SetCookies(u, parseSetCookies("PHPSESSID=s; Path=/"))
	j.SetCookies(u, parseSetCookies("PHPSESSID=; Path=/; Max-Age=0", "_ga=; Max-Age=0"))
	if got := j.Cookies(u); len(got) != 0 {
		t.Errorf("after the server deleted it: %q", names(got))
	}
	if r := j.Refused(); len(r) != 0 {
		t.Errorf("a deletion stores nothing and is not a refusal; counted %v", r)
	}
}

func TestJarLimitPerOrigin(t *testing.T) {
	u := mustURL(t, "http://example.com/")
	j, err := NewJar(Purpose{Allow: []string{"app_a", "app_b", "app_c"}}, Options{MaxPerOrigin: 2})
	if err != nil {
		t.Fatal(err)
	}
	j.SetCookies(u, parseSetCookies("app_a=1", "app_b=1", "app_c=1"))
	j.SetCookies(u, parseSetCookies("app_a=2")) // replacing a held cookie is not over the limit
	if got := j.Cookies(u); !slices.Equal(names(got), []string{"app_a", "app_b"}) || got[0].Value != "2" && got[1].Value != "2" {
		t.Errorf("kept %v", got)
	}
	if r := j.Refused(); r[ReasonLimit] != 1 {
		t.Errorf("refused %v, want limit 1", r)
	}
	// Another origin has its own limit.
	j.SetCookies(mustURL(t, "http://example.com:81/"), parseSetCookies("app_c=1"))
	if got := names(j.Cookies(mustURL(t, "http://example.com:81/"))); !slices.Equal(got, []string{"app_c"}) {
		t.Errorf("other origin kept %q", got)
	}
}

// originCount returns how many origins hold a cookiejar: the memory the sweep bounds.
func originCount(j *Jar) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.origins)
}

func TestJarForgetsOriginsWhoseCookiesExpired(t *testing.T) {
	clk := &fakeClock{time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	j, _ := NewJar(Purpose{Categories: []Category{Session}}, Options{Now: clk.now, MaxLifetime: time.Minute})
	for i := range 64 {
		j.SetCookies(mustURL(t, fmt.Sprintf("http://127.0.0.1:%d/", 10000+i)), parseSetCookies("PHPSESSID=s"))
	}
	if n := originCount(j); n != 64 {
		t.Fatalf("%d origins, want 64", n)
	}
	clk.advance(time.Minute)
	j.SetCookies(mustURL(t, "http://127.0.0.1:20000/"), parseSetCookies("PHPSESSID=s"))
	if n := originCount(j); n != 1 {
		t.Errorf("after every cookie expired and a new origin arrived: %d origins, want 1", n)
	}
	if got := names(j.Cookies(mustURL(t, "http://127.0.0.1:20000/"))); !slices.Equal(got, []string{"PHPSESSID"}) {
		t.Errorf("the new origin's cookie: %q", got)
	}
}

func TestJarRefusalsAreObservable(t *testing.T) {
	var logs bytes.Buffer
	var seen []Refusal
	j, err := NewJar(Purpose{Categories: []Category{Session}}, Options{
		Logger:   slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnRefuse: func(r Refusal) { seen = append(seen, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	j.SetCookies(mustURL(t, "http://example.com:8080/"), parseSetCookies(
		"_ga=secret-ga-value", "_gid=x", "_fbp=x", "OptanonConsent=x", "CookieConsent=x", "mystery=x", "PHPSESSID=kept"))
	if got, want := j.RefusedSummary(), "analytics 2, consent 2, marketing 1, unknown 1"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	line := logs.String()
	for _, want := range []string{`msg="cookie refused"`, "origin=http://example.com:8080", "name=_ga", "reason=analytics", `platform="Google Analytics"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "secret-ga-value") || strings.Contains(line, "kept") {
		t.Errorf("log leaks a cookie value:\n%s", line)
	}
	if len(seen) != 6 || seen[0].Name != "_ga" || seen[0].Match.Category != Analytics {
		t.Errorf("OnRefuse saw %+v", seen)
	}
	if got := names(j.Cookies(mustURL(t, "http://example.com:8080/"))); !slices.Equal(got, []string{"PHPSESSID"}) {
		t.Errorf("kept %q besides the refusals, want [PHPSESSID]", got)
	}
}

func TestZeroJarKeepsNothing(t *testing.T) {
	var j Jar
	u := mustURL(t, "http://example.com/")
	j.SetCookies(u, parseSetCookies("PHPSESSID=s", "_ga=1"))
	if got := j.Cookies(u); got != nil {
		t.Errorf("zero Jar returned %q", names(got))
	}
	if r := j.Refused(); r["session"] != 1 || r["analytics"] != 1 {
		t.Errorf("zero Jar refused %v", r)
	}
	if j.RefusedSummary() != "analytics 1, session 1" {
		t.Errorf("summary %q", j.RefusedSummary())
	}
}

func TestNilJarKeepsNothing(t *testing.T) {
	var j *Jar
	u := mustURL(t, "http://example.com/")
	j.SetCookies(u, parseSetCookies("PHPSESSID=s"))
	if got := j.Cookies(u); got != nil || j.Refused() != nil || j.RefusedSummary() != "" {
		t.Errorf("nil Jar: %q", names(got))
	}
}

// The jar works as any http.Client's jar: a real server's Set-Cookie headers in, Cookie headers out.
func TestJarWithHTTPClient(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Cookie"))
		mu.Unlock()
		for _, c := range siteCookies {
			w.Header().Add("Set-Cookie", c)
		}
	}))
	defer srv.Close()
	j, _ := NewJar(Purpose{Categories: []Category{Session, LoadBalancer}}, Options{})
	client := &http.Client{Jar: j}
	for range 2 {
		resp, err := client.Get(srv.URL + "/page")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if got[0] != "" {
		t.Errorf("first request carried %q", got[0])
	}
	parts := strings.Split(got[1], "; ")
	slices.Sort(parts)
	if want := []string{"AWSALB=lb1", "PHPSESSID=s1"}; !slices.Equal(parts, want) {
		t.Errorf("second request carried %q, want %q", got[1], want)
	}
}

func BenchmarkJarSetAndGet(b *testing.B) {
	u := mustURL(b, "http://127.0.0.1:8080/page")
	set := parseSetCookies(siteCookies...)
	j, _ := NewJar(Purpose{Categories: []Category{Session, LoadBalancer}}, Options{Logger: slog.New(slog.DiscardHandler)})
	b.ReportAllocs()
	for b.Loop() {
		j.SetCookies(u, set)
		j.Cookies(u)
	}
}

func TestJarConcurrentUse(t *testing.T) {
	j, _ := NewJar(Purpose{Categories: []Category{Session}}, Options{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			u := mustURL(t, fmt.Sprintf("http://127.0.0.1:%d/", 9000+i%2))
			for range 50 {
				j.SetCookies(u, parseSetCookies("PHPSESSID=s", "_ga=x"))
				j.Cookies(u)
			}
		})
	}
	wg.Wait()
	if r := j.Refused(); r["analytics"] != 400 {
		t.Errorf("refused %v, want analytics 400", r)
	}
}

// TestJarLoginPurpose: for a Purpose.Login origin the jar keeps what a signed-in session needs —
// login, session, CSRF and load-balancer cookies — and still refuses trackers, consent, anti-bot
// and paywall cookies; on any other origin the login cookie is refused and the session cookie too,
// as no category was declared.
func TestJarLoginPurpose(t *testing.T) {
	jar, err := NewJar(Purpose{Login: []string{"https://members.example.org"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := []string{"wordpress_logged_in_abc=u; Path=/; Secure", "_shop_session=s; Path=/; Secure", "csrftoken=c; Path=/; Secure",
		"AWSALB=lb; Path=/", "_ga=GA1.1.1", "OptanonConsent=x", "cf_clearance=y", "__tbc=z", "myapp_state=1"}
	members := mustURL(t, "https://members.example.org/login")
	refused := jar.Store(members, parseSetCookies(set...))
	var why []string
	for _, r := range refused {
		why = append(why, r.Name+" "+r.Reason)
	}
	wantWhy := []string{"_ga analytics", "OptanonConsent consent", "cf_clearance anti-bot", "__tbc paywall", "myapp_state unknown"}
	if !slices.Equal(why, wantWhy) {
		t.Errorf("refused on the login origin: %q, want %q", why, wantWhy)
	}
	want := []string{"AWSALB", "_shop_session", "csrftoken", "wordpress_logged_in_abc"}
	if got := names(jar.Cookies(mustURL(t, "https://members.example.org/members"))); !slices.Equal(got, want) {
		t.Errorf("sent back to the login origin: %q, want %q", got, want)
	}
	for _, other := range []string{"http://members.example.org/", "https://members.example.org:8443/", "https://www.example.org/", "https://example.org/"} {
		if got := jar.Cookies(mustURL(t, other)); len(got) != 0 {
			t.Errorf("%s received %q: login cookies must stay on their origin", other, names(got))
		}
	}
	elsewhere := mustURL(t, "https://www.example.org/")
	refused = jar.Store(elsewhere, parseSetCookies("wordpress_logged_in_abc=u; Path=/; Secure", "_shop_session=s; Path=/; Secure"))
	if len(refused) != 2 || refused[0].Reason != "login" || refused[1].Reason != "session" {
		t.Errorf("off the login origin: refused %+v, want the login and the session cookie", refused)
	}
	if !jar.Keeps(members, "_shop_session") || jar.Keeps(members, "_ga") || jar.Keeps(elsewhere, "wordpress_logged_in_abc") {
		t.Error("Keeps disagrees with what the jar stores")
	}
}

// TestAllowPrefixKeepsNoLoginCookie: an allow-list prefix cannot keep a login cookie off the
// Purpose.Login origins ("wordpress_*" would otherwise match wordpress_logged_in_…).
func TestAllowPrefixKeepsNoLoginCookie(t *testing.T) {
	jar, err := NewJar(Purpose{Allow: []string{"wordpress_*"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := mustURL(t, "https://www.example.org/")
	if refused := jar.Store(u, parseSetCookies("wordpress_logged_in_abc=u; Path=/")); len(refused) != 1 || refused[0].Reason != "login" {
		t.Errorf("refused %+v, want the login cookie refused as login", refused)
	}
}
