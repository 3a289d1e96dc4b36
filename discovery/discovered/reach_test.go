package discovered

import (
	"errors"
	"testing"
)

func TestReach(t *testing.T) {
	r := NewReach([]string{"https://shop.example/", "http://blog.example:8080/start"}, 0)
	tests := []struct {
		name, namedBy, url string
		line               bool
		reason             string // "" when allowed
	}{
		{"the naming origin", "https://shop.example/robots.txt", "https://shop.example/sitemap.xml", false, ""},
		{"another start origin", "https://shop.example/", "http://blog.example:8080/feed", false, ""},
		{"a feed on another origin", "https://shop.example/", "https://feeds.example/shop", false, ReasonOffOrigin},
		{"the same host, another scheme", "https://shop.example/", "http://shop.example/feed", false, ReasonOffOrigin},
		{"a redirect off the origins", "https://shop.example/sitemap.xml", "https://cdn.example/sitemap.xml", false, ReasonOffOrigin},
		{"a first foreign sitemap", "https://shop.example/robots.txt", "https://cdn.example/a.xml", true, ""},
		{"the same foreign origin again", "https://shop.example/robots.txt", "https://cdn.example/b.xml", true, ""},
		{"a second foreign sitemap origin", "https://shop.example/robots.txt", "https://s3.example/c.xml", true, ""},
		{"a third foreign sitemap origin", "https://shop.example/robots.txt", "https://other.example/d.xml", true, ReasonForeignSitemaps},
		{"another origin's own allowance", "http://blog.example:8080/robots.txt", "https://other.example/d.xml", true, ""},
		{"not http(s)", "https://shop.example/", "ftp://shop.example/x", false, ReasonOffOrigin},
		{"a namer without origin, a foreign sitemap", "", "https://cdn.example/a.xml", true, ReasonOffOrigin},
	}
	for _, tt := range tests {
		err := r.Check(tt.namedBy, tt.url, tt.line)
		var out *OutOfReachError
		switch {
		case tt.reason == "" && err != nil:
			t.Errorf("%s: %v, want allowed", tt.name, err)
		case tt.reason != "" && (!errors.As(err, &out) || out.Reason != tt.reason || !errors.Is(err, ErrOutOfReach)):
			t.Errorf("%s: %v, want refused (%s)", tt.name, err, tt.reason)
		}
	}
	if err := (*Reach)(nil).Check("", "https://anything.example/", false); err != nil {
		t.Errorf("a nil Reach refused: %v", err)
	}
	if err := NewReach(nil, -1).Check("https://a.example/robots.txt", "https://b.example/s.xml", true); err == nil {
		t.Error("with no foreign allowance a foreign sitemap passed")
	}
}
