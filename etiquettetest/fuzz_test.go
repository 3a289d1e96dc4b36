package etiquettetest

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzWellKnownMentions feeds arbitrary answer bodies to the scan that decides which
// /.well-known/ URLs a site mentioned: it must not panic, and everything it returns must be an
// absolute URL whose path is under /.well-known/ and that carries no query or fragment.
func FuzzWellKnownMentions(f *testing.F) {
	for _, seed := range []string{
		`<a href="/.well-known/security.txt">`,
		"Sitemap: https://x.example/.well-known/sitemap.xml\n",
		`{"link":"http://127.0.0.1:1/.well-known/a?b#c"}`,
		"href=/.well-known/x>",
		"/.well-known//.well-known/",
		"%zz/.well-known/%",
		"../.well-known/x",
	} {
		f.Add(seed)
	}
	base, _ := url.Parse("http://127.0.0.1:40001/dir/page")
	f.Fuzz(func(t *testing.T, text string) {
		for _, m := range wellKnownMentions(base, text) {
			u, err := url.Parse(m)
			if err != nil || !u.IsAbs() || !strings.HasPrefix(u.EscapedPath(), wellKnownPrefix) || u.RawQuery != "" || u.Fragment != "" {
				t.Errorf("mention %q of %q is not an absolute /.well-known/ URL (%v)", m, text, err)
			}
		}
	})
}
