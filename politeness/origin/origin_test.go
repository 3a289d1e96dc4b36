package origin

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

func TestKeys(t *testing.T) {
	cases := []struct {
		url, robotsKey, budgetKey string
	}{
		{"http://Example.ORG/a", "http://example.org", "example.org"},
		{"https://example.org/a", "https://example.org", "example.org"},
		{"https://example.org:443/a", "https://example.org", "example.org"},
		{"http://example.org:80/", "http://example.org", "example.org"},
		{"http://example.org:8080/", "http://example.org:8080", "example.org:8080"},
		{"http://Example.org:8080/", "http://example.org:8080", "example.org:8080"},
		{"http://xn--bcher-kva.example:8080/", "http://xn--bcher-kva.example:8080", "xn--bcher-kva.example:8080"},
		{"https://example.org:80/", "https://example.org:80", "example.org"},
		{"https://Bücher.example/x", "https://xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"http://127.0.0.1:5000/x", "http://127.0.0.1:5000", "127.0.0.1:5000"},
		{"http://[::1]:5000/x", "http://[::1]:5000", "[::1]:5000"},
		{"https://[::1]/x", "https://[::1]", "[::1]"},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := RobotsKey(u); err != nil || got != c.robotsKey {
			t.Errorf("RobotsKey(%s) = %q, %v; want %q", c.url, got, err, c.robotsKey)
		}
		if got, err := BudgetKey(u); err != nil || got != c.budgetKey {
			t.Errorf("BudgetKey(%s) = %q, %v; want %q", c.url, got, err, c.budgetKey)
		}
	}
}

func TestHTTPAndHTTPSShareABudgetButNotRobots(t *testing.T) {
	a, _ := url.Parse("http://example.org/")
	b, _ := url.Parse("https://example.org/")
	ka, _ := BudgetKey(a)
	kb, _ := BudgetKey(b)
	if ka != kb {
		t.Errorf("budget keys differ: %q %q", ka, kb)
	}
	ra, _ := RobotsKey(a)
	rb, _ := RobotsKey(b)
	if ra == rb {
		t.Errorf("robots keys are equal (%q): RFC 9309 §2.3 scopes robots.txt to the scheme", ra)
	}
}

func TestNoHost(t *testing.T) {
	for _, raw := range []string{"/relative", "mailto:a@example.org", "ftp://example.org/", "file:///etc/passwd", "http://:8080/"} {
		u, _ := url.Parse(raw)
		if _, err := BudgetKey(u); !errors.Is(err, ErrNoHost) {
			t.Errorf("BudgetKey(%q) error = %v, want ErrNoHost", raw, err)
		}
		if _, err := RobotsKey(u); !errors.Is(err, ErrNoHost) {
			t.Errorf("RobotsKey(%q) error = %v, want ErrNoHost", raw, err)
		}
	}
	if _, err := BudgetKey(nil); !errors.Is(err, ErrNoHost) {
		t.Errorf("BudgetKey(nil) error = %v", err)
	}
}

func FuzzKeys(f *testing.F) {
	for _, s := range []string{"http://example.org/", "https://[::1]:8080/x", "http://xn--bcher-kva.example/", "https://ex%41mple.org/", "http://a..b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		k, err := BudgetKey(u)
		if err != nil {
			return
		}
		// A key parses back as the host of an http URL with the same key.
		back, err := url.Parse("http://" + k + "/")
		if err != nil {
			t.Fatalf("BudgetKey(%q) = %q does not parse back: %v", raw, k, err)
		}
		if k2, err := BudgetKey(back); err != nil || k2 != k {
			t.Fatalf("BudgetKey(%q) = %q, but %q gives %q, %v", raw, k, back, k2, err)
		}
	})
}

// Host skips IDNA for ASCII hosts without punycode labels because IDNA's lookup mapping either
// leaves such a lower-case host unchanged or rejects it (which Host treats alike); this pins that
// premise. (A punycode label may decode to nothing: "xn--.0000" becomes ".0000".)
func FuzzHostSkipsIDNAOnlyWhenIDNAWouldNotChangeIt(f *testing.F) {
	for _, s := range []string{"example.org", "xn--bcher-kva.example", "a..b", "-a.example", "a_b.example", "xn--zz", "EXAMPLE.org", "127.0.0.1", "::1", "bücher.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h := strings.ToLower(s)
		if !isASCII(h) || strings.Contains(h, "xn--") {
			return
		}
		if a, err := idna.Lookup.ToASCII(h); err == nil && a != "" && a != h {
			t.Errorf("IDNA maps the ASCII host %q to %q", h, a)
		}
	})
}

// BudgetKey runs for every request in three layers of the door; a URL whose host is already in
// the key's form costs no allocation, whatever its port.
func TestBudgetKeyAllocatesNothingForACanonicalHost(t *testing.T) {
	for _, raw := range []string{"http://127.0.0.1:8080/page", "https://example.org/page", "http://example.org:8443/"} {
		u, _ := url.Parse(raw)
		if n := testing.AllocsPerRun(100, func() { _, _ = BudgetKey(u) }); n != 0 {
			t.Errorf("BudgetKey(%s) allocates %v times", raw, n)
		}
	}
}
