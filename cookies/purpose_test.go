package cookies

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseCategories(t *testing.T) {
	tests := []struct {
		in      string
		want    []Category
		wantErr bool
	}{
		{"", nil, false},
		{"session", []Category{Session}, false},
		{"session,loadbalancer", []Category{Session, LoadBalancer}, false},
		{" csrf , Session,csrf,", []Category{CSRF, Session}, false},
		{"session,analytics", nil, true}, // a category, but not one a purpose may declare
		{"functional", nil, true},
		{"sesion", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseCategories(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("ParseCategories(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && (!errors.Is(err, ErrBadCategory) || !strings.Contains(err.Error(), "session, loadbalancer, csrf")) {
			t.Errorf("ParseCategories(%q) error %q should wrap ErrBadCategory and list the declarable categories", tt.in, err)
		}
	}
}

func TestNewJarRejectsBadPurposes(t *testing.T) {
	tests := []struct {
		p    Purpose
		is   error
		says string
	}{
		{Purpose{Categories: []Category{Analytics}}, ErrBadCategory, "a purpose may declare session, loadbalancer, csrf"},
		{Purpose{Categories: []Category{Unknown}}, ErrBadCategory, "unknown"},
		{Purpose{Categories: []Category{numCategories + 1}}, ErrBadCategory, "a purpose may declare"},
		{Purpose{Allow: []string{"_ga"}}, ErrBadAllow, "analytics cookies are never kept"},
		{Purpose{Allow: []string{"OptanonConsent"}}, ErrBadAllow, "consent cookies"},
		{Purpose{Allow: []string{"a b"}}, ErrBadAllow, "not a cookie name"},
		{Purpose{Allow: []string{"*"}}, ErrBadAllow, "not a cookie name"},
		{Purpose{Categories: []Category{Login}}, ErrBadCategory, "name the origins the crawler signs in to in Purpose.Login"},
		{Purpose{Allow: []string{"wordpress_logged_in_abc"}}, ErrBadAllow, "kept only for the origins in Purpose.Login"},
		{Purpose{Login: []string{"https://members.example.org/members"}}, ErrBadLogin, "name an origin, scheme://host[:port]"},
		{Purpose{Login: []string{"https://members.example.org/?next=/"}}, ErrBadLogin, "name an origin"},
		{Purpose{Login: []string{"https://bot:pw@members.example.org"}}, ErrBadLogin, "name an origin"},
		{Purpose{Login: []string{"members.example.org"}}, ErrBadLogin, "name an origin"},
		{Purpose{Login: []string{"ftp://members.example.org"}}, ErrBadLogin, "Purpose.Login"},
		{Purpose{Login: []string{""}}, ErrBadLogin, "name an origin"},
	}
	for _, tt := range tests {
		_, err := NewJar(tt.p, Options{})
		if !errors.Is(err, tt.is) || !strings.Contains(fmt.Sprint(err), tt.says) {
			t.Errorf("NewJar(%+v) = %v; want %v saying %q", tt.p, err, tt.is, tt.says)
		}
		if verr := tt.p.Validate(); fmt.Sprint(verr) != fmt.Sprint(err) {
			t.Errorf("Purpose.Validate() = %v, NewJar = %v; want the same answer", verr, err)
		}
	}
	if err := (Purpose{Categories: []Category{Session, LoadBalancer, CSRF}, Allow: []string{"myapp_*", "mystery"}}).Validate(); err != nil {
		t.Errorf("a purpose of every declarable category and two allow entries: %v", err)
	}
}

func TestLoginOrigins(t *testing.T) {
	p := Purpose{Login: []string{"https://Members.Example.org/", "https://members.example.org:443", "http://localhost:8080", "not an origin"}}
	want := []string{"https://members.example.org", "http://localhost:8080"}
	if got := p.LoginOrigins(); !slices.Equal(got, want) {
		t.Errorf("LoginOrigins() = %q, want %q (one key per origin, default port folded, bad entries left out)", got, want)
	}
}

// FuzzLoginOrigin: a Purpose.Login entry either fails with ErrBadLogin or gives an origin key
// that is its own key again (scheme://host[:port], nothing after it).
func FuzzLoginOrigin(f *testing.F) {
	for _, s := range []string{"https://members.example.org", "http://localhost:8080/", "https://x/y", "https://u:p@x",
		"ftp://x", "", "//x", "https://[::1]:443", "https://Bücher.example", "https://x?", "https://x#f", "https://x:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := loginOrigin(s)
		if err != nil {
			if !errors.Is(err, ErrBadLogin) {
				t.Fatalf("loginOrigin(%q) = %v, not ErrBadLogin", s, err)
			}
			return
		}
		again, err := loginOrigin(k)
		if err != nil || again != k {
			t.Fatalf("loginOrigin(%q) = %q, whose own key is %q (%v)", s, k, again, err)
		}
	})
}
