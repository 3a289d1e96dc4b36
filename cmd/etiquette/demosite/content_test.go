package demosite

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOutline(t *testing.T) {
	tests := []struct {
		name, md  string
		wantTitle string
		wantLinks []string
	}{
		{"title and links", "# Title\n\n- [a](/a)\n- [b](http://x/b) and [c](/c?q=1)\n", "Title", []string{"/a", "http://x/b", "/c?q=1"}},
		{"Windows line ends", "# Title\r\n[a](/a)\r\n", "Title", []string{"/a"}},
		{"no heading on the first line", "intro\n# Title\n", "", nil},
		{"a level-2 heading is no title", "## Title\n", "", nil},
		{"images are not links", "# T\n![logo](/logo.png) [home](/)\n", "T", []string{"/"}},
		{"targets with spaces are not links", "# T\n[x](/a b)\n", "T", nil},
		{"empty", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			title, links := outline(tt.md)
			if title != tt.wantTitle || !slices.Equal(links, tt.wantLinks) {
				t.Errorf("outline = %q, %q; want %q, %q", title, links, tt.wantTitle, tt.wantLinks)
			}
		})
	}
}

func TestEveryContentFileRenders(t *testing.T) {
	b := bases{Blog: "http://b", Shop: "http://s", Docs: "http://d", Archive: "http://a"}
	for _, folder := range []string{"blog", "shop", "docs", "archive"} {
		pages, texts, err := contentOf(folder, b)
		if err != nil {
			t.Fatalf("%s: %v", folder, err)
		}
		if len(pages) == 0 || pages[0].path != "/" && !slices.ContainsFunc(pages, func(p page) bool { return p.path == "/" }) {
			t.Errorf("%s: no home page (index.md) among %d pages", folder, len(pages))
		}
		for _, p := range pages {
			if strings.Contains(string(p.text), "{{") {
				t.Errorf("%s%s: a placeholder was not filled in", folder, p.path)
			}
		}
		for name, text := range texts {
			if strings.Contains(string(text), "{{") {
				t.Errorf("%s/%s: a placeholder was not filled in", folder, name)
			}
		}
	}
}

func FuzzOutline(f *testing.F) {
	for _, s := range []string{"# T\n[a](/a)\n", "![x](y)", "[", "# \n[](", "# T\r\n[a](/a)[b](/b)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		title, links := outline(md)
		if title != "" && !strings.HasPrefix(md, "# ") {
			t.Errorf("title %q from a page that does not start with a heading", title)
		}
		for _, l := range links {
			if l == "" || strings.ContainsAny(l, " \t\n()") || !strings.Contains(md, "]("+l+")") {
				t.Errorf("link %q is not a target of md", l)
			}
			if utf8.ValidString(md) && !utf8.ValidString(l) {
				t.Errorf("link %q of valid UTF-8 is not valid UTF-8", l)
			}
		}
	})
}
