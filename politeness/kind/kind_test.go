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
	for _, k := range All {
		if got, ok := Parse(" " + string(k) + " "); !ok || got != k {
			t.Errorf("Parse(%q) = %q, %v", k, got, ok)
		}
	}
	if _, ok := Parse("robots.txt"); ok {
		t.Error("Parse accepted an unknown kind")
	}
}
