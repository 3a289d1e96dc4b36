package politeness

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/politecrawl/etiquette/cookies"
)

// loginSite is a members site on loopback: POST /login with the right credentials answers 302 to
// /members with a session cookie (and a tracker); /members answers the members page to a request
// carrying that session, and 302 to /login otherwise, as a Rails or WordPress site does.
type loginSite struct {
	*httptest.Server
	cookie string // the session cookie's name

	mu      sync.Mutex
	cookies []string // the Cookie header of every request, in order
}

const membersPage = "members only: the page the task needs"

func newLoginSite(t *testing.T, cookie string) *loginSite {
	t.Helper()
	s := &loginSite{cookie: cookie}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.cookies = append(s.cookies, r.Header.Get("Cookie"))
		s.mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/login":
			if r.Method == http.MethodPost && r.PostFormValue("user") == "bot" && r.PostFormValue("password") == "given-to-the-operator" {
				http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: "s3ss10n", Path: "/", HttpOnly: true})
				http.SetCookie(w, &http.Cookie{Name: "_ga", Value: "GA1.2.3", Path: "/"})
				http.Redirect(w, r, "/members", http.StatusFound)
				return
			}
			io.WriteString(w, "<form method=post>login form</form>")
		case "/members":
			if c, err := r.Cookie(s.cookie); err == nil && c.Value == "s3ss10n" {
				io.WriteString(w, membersPage)
				return
			}
			http.Redirect(w, r, "/login", http.StatusFound)
		default:
			io.WriteString(w, "public page")
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *loginSite) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cookies...)
}

// login posts the credentials through the door's client and returns the body the redirect chain
// ends on.
func login(t *testing.T, d *Door, site string) string {
	t.Helper()
	resp, err := d.Client().PostForm(site+"/login", url.Values{"user": {"bot"}, "password": {"given-to-the-operator"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLoginThroughTheDoor: POST credentials → 302 with the session cookie → GET /members with it.
// The flow works when the purpose names the site's origin in Purpose.Login, and ends on the login
// form without it: stateless, with only a session category for a login cookie, or with the login
// declared for another origin.
func TestLoginThroughTheDoor(t *testing.T) {
	tests := []struct {
		name, cookie string
		purpose      func(site string) *cookies.Purpose
		wantMembers  bool
	}{
		{"Rails session, login declared", "_shop_session",
			func(site string) *cookies.Purpose { return &cookies.Purpose{Login: []string{site}} }, true},
		{"WordPress login cookie, login declared", "wordpress_logged_in_0123abcd",
			func(site string) *cookies.Purpose { return &cookies.Purpose{Login: []string{site}} }, true},
		{"no purpose", "_shop_session",
			func(string) *cookies.Purpose { return nil }, false},
		{"a login cookie needs Purpose.Login, not the session category", "wordpress_logged_in_0123abcd",
			func(string) *cookies.Purpose {
				return &cookies.Purpose{Categories: []cookies.Category{cookies.Session}}
			}, false},
		{"login declared for another origin", "_shop_session",
			func(string) *cookies.Purpose { return &cookies.Purpose{Login: []string{"https://members.example.org"}} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := newLoginSite(t, tt.cookie)
			d := testDoor(t, site.Server, func(p *Policy) { p.Cookies = tt.purpose(site.URL) })
			body := login(t, d, site.URL)
			if got := body == membersPage; got != tt.wantMembers {
				t.Fatalf("the login flow ended on %q; want the members page: %v", body, tt.wantMembers)
			}
			for _, c := range site.sent() {
				if strings.Contains(c, "_ga") {
					t.Errorf("the tracker set with the session went back to the site: Cookie %q", c)
				}
			}
		})
	}
}

// TestLoginCookiesStayOnTheirOrigin: after a login, the session goes to the login origin only —
// not to another server, not to the same host on another port.
func TestLoginCookiesStayOnTheirOrigin(t *testing.T) {
	site := newLoginSite(t, "_shop_session")
	other := newLoginSite(t, "_shop_session")
	d := testDoor(t, site.Server, func(p *Policy) { p.Cookies = &cookies.Purpose{Login: []string{site.URL}} })
	if body := login(t, d, site.URL); body != membersPage {
		t.Fatalf("login failed: %q", body)
	}
	resp, err := d.Client().Get(other.URL + "/members")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range other.sent() {
		if c != "" {
			t.Errorf("another origin (same host, other port) received Cookie %q", c)
		}
	}
}
