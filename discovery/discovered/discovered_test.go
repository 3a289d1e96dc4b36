package discovered

import (
	"errors"
	"strings"
	"testing"
)

func TestFilterKeep(t *testing.T) {
	long := "https://example.org/" + strings.Repeat("a", MaxLen)
	cases := []struct {
		name    string
		allowed []string
		ref     string
		want    string // "" when dropped
		dropped Dropped
	}{
		{"absolute, same origin", nil, "https://example.org/a", "https://example.org/a", Dropped{}},
		{"spaces trimmed", nil, " \n https://example.org/a\t", "https://example.org/a", Dropped{}},
		{"relative, resolved against the file", nil, "b/c", "https://example.org/dir/b/c", Dropped{}},
		{"dot segments removed", nil, "https://example.org/x/../y", "https://example.org/y", Dropped{}},
		{"fragment dropped", nil, "https://example.org/a#part", "https://example.org/a", Dropped{}},
		{"userinfo stripped", nil, "https://user:secret@example.org/a", "https://example.org/a", Dropped{}},
		{"host lower-cased", nil, "https://EXAMPLE.ORG/A", "https://example.org/A", Dropped{}},
		{"empty port folded", nil, "https://example.org:/a", "https://example.org/a", Dropped{}},
		{"default port is the same origin", nil, "https://example.org:443/a", "https://example.org:443/a", Dropped{}},
		{"another host", nil, "https://other.example/a", "", Dropped{OffScope: 1}},
		{"another scheme", nil, "http://example.org/a", "", Dropped{OffScope: 1}},
		{"another port", nil, "https://example.org:8443/a", "", Dropped{OffScope: 1}},
		{"IDNA forms are one origin", []string{"https://bücher.example"}, "https://xn--bcher-kva.example/a", "https://xn--bcher-kva.example/a", Dropped{}},
		{"ftp", nil, "ftp://example.org/a", "", Dropped{Invalid: 1}},
		{"javascript", nil, "javascript:alert(1)", "", Dropped{Invalid: 1}},
		{"mailto", nil, "mailto:a@example.org", "", Dropped{Invalid: 1}},
		{"empty", nil, "  ", "", Dropped{Invalid: 1}},
		{"not a URL", nil, "https://exa mple.org/%zz", "", Dropped{Invalid: 1}},
		{"too long", nil, long, "", Dropped{TooLong: 1}},
		{"directory scope, inside", []string{"https://example.org/shop/"}, "https://example.org/shop/item", "https://example.org/shop/item", Dropped{}},
		{"directory scope, outside", []string{"https://example.org/shop/"}, "https://example.org/shopping", "", Dropped{OffScope: 1}},
		{"a file URL scopes to its directory", []string{"https://example.org/shop/sitemap.xml"}, "https://example.org/about", "", Dropped{OffScope: 1}},
		{"empty locations are ignored", []string{"", " "}, "https://example.org/a", "https://example.org/a", Dropped{}},
		{"two areas", []string{"https://example.org", "https://cdn.example"}, "https://cdn.example/s.xml", "https://cdn.example/s.xml", Dropped{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			allowed := c.allowed
			if allowed == nil {
				allowed = []string{"https://example.org"}
			}
			f, err := NewFilter("https://example.org/dir/file.xml", allowed...)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := f.Keep(c.ref)
			if got != c.want || ok != (c.want != "") {
				t.Errorf("Keep(%q) = %q, %v; want %q", c.ref, got, ok, c.want)
			}
			if f.Dropped != c.dropped {
				t.Errorf("Dropped = %+v, want %+v", f.Dropped, c.dropped)
			}
		})
	}
}

func TestCleanErrors(t *testing.T) {
	f, err := NewFilter("https://example.org/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Clean("ftp://x/"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Clean(ftp) = %v, want ErrInvalid", err)
	}
	for _, noHost := range []string{"//:/a", "https://:/a", "https://:8080/a"} {
		if u, err := f.Clean(noHost); !errors.Is(err, ErrInvalid) {
			t.Errorf("Clean(%q) = %v, %v; want ErrInvalid: a port is not a host", noHost, u, err)
		}
	}
	if _, err := f.Clean("/" + strings.Repeat("a", MaxLen)); !errors.Is(err, ErrTooLong) {
		t.Errorf("Clean(long) = %v, want ErrTooLong", err)
	}
	if _, ok := f.Keep("https://other.example/a"); ok {
		t.Error("with no allowed location, a filter kept a URL off the file's origin")
	}
	if _, ok := f.Keep("https://example.org/a"); !ok {
		t.Error("with no allowed location, a filter dropped a URL on the file's origin")
	}
}

func TestNewFilterRefusesNonHTTP(t *testing.T) {
	if _, err := NewFilter("https://example.org/", "ftp://example.org"); err == nil {
		t.Error("NewFilter accepted an ftp location")
	}
	if _, err := NewFilter("file:///etc/passwd"); err == nil {
		t.Error("NewFilter accepted a file URL")
	}
}
