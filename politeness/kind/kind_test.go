package kind

import (
	"context"
	"net/http"
	"testing"
)

func TestOf(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://example.org/", nil)
	if got := Of(req); got != HTML {
		t.Errorf("unmarked request: %q, want html", got)
	}
	req.Header.Set(Header, "Sitemap")
	if got := Of(req); got != Sitemap {
		t.Errorf("header sitemap: %q", got)
	}
	req = Mark(req, Feed)
	if got := Of(req); got != Feed {
		t.Errorf("the context wins over the header: %q, want feed", got)
	}
	req.Header.Set(Header, "no-such-kind")
	if got := Of(Mark(req, "")); got != HTML {
		t.Errorf("an unknown header value reads as html, got %q", got)
	}
	if got := FromContext(context.Background()); got != HTML {
		t.Errorf("FromContext(empty) = %q", got)
	}
}

func TestParse(t *testing.T) {
	for _, k := range []Kind{Robots, Sitemap, LLMs, Feed, API, HTML, Other} {
		if got, ok := Parse(" " + string(k) + " "); !ok || got != k {
			t.Errorf("Parse(%q) = %q, %v", k, got, ok)
		}
	}
	if got, ok := Parse("SiteMap"); !ok || got != Sitemap {
		t.Errorf("Parse is case-insensitive: got %q, %v", got, ok)
	}
	if _, ok := Parse("robots.txt"); ok {
		t.Error("Parse accepted an unknown kind")
	}
}

func TestAccept(t *testing.T) {
	tests := []struct {
		kind Kind
		want string
	}{
		{HTML, "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"},
		{"", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"}, // the zero value reads as HTML
		{Sitemap, "application/xml,text/xml;q=0.9,application/gzip;q=0.8,text/plain;q=0.5,*/*;q=0.1"},
		{LLMs, "text/markdown,text/plain;q=0.9,*/*;q=0.1"},
		{Feed, "application/rss+xml,application/atom+xml,application/feed+json,application/xml;q=0.9,*/*;q=0.1"},
		{API, "application/json,*/*;q=0.1"},
		{Robots, "text/plain,*/*;q=0.1"},
		{Other, "*/*"},
	}
	for _, tt := range tests {
		if got := tt.kind.Accept(); got != tt.want {
			t.Errorf("%q.Accept() = %q, want %q", tt.kind, got, tt.want)
		}
	}
}

// The door marks every request with its kind: marking costs the context and nothing more.
func TestWithKindAllocatesOnlyTheContext(t *testing.T) {
	ctx := context.Background()
	for _, k := range []Kind{Robots, Sitemap, LLMs, Feed, API, HTML, Other} {
		k := Kind(string([]byte(k))) // a kind read at run time, as the identity layer's is
		if n := testing.AllocsPerRun(100, func() { _ = WithKind(ctx, k) }); n != 1 {
			t.Errorf("WithKind(%s) allocates %v times, want 1 (the context)", k, n)
		}
		if got := FromContext(WithKind(ctx, k)); got != k {
			t.Errorf("FromContext(WithKind(%s)) = %s", k, got)
		}
	}
}
