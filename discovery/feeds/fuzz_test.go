package feeds

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzParse: gofeed never panics through Parse, errors are the package's, and every entry obeys
// the rule (on the origin, no fragment, no userinfo) and the caps.
func FuzzParse(f *testing.F) {
	for _, s := range []string{rss, atom, jsonFeed, "<rss><channel><item><link>&#0;</link>", `{"items":[{"url":1}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := Parse(strings.NewReader(body), "https://example.org/feed", Options{MaxBytes: 1 << 16, MaxEntries: 50})
		if err != nil {
			if got != nil || !(errors.Is(err, ErrNotFeed) || errors.Is(err, ErrBroken) || errors.Is(err, ErrTooLarge)) {
				t.Fatalf("unexpected outcome %v, %v", got, err)
			}
			return
		}
		if len(got.Entries) > 50 {
			t.Fatalf("%d entries past MaxEntries", len(got.Entries))
		}
		for _, e := range got.Entries {
			u, err := url.Parse(e.Loc)
			if err != nil || u.Scheme != "https" || u.Hostname() != "example.org" || u.User != nil || u.Fragment != "" {
				t.Fatalf("entry %q breaks the rule", e.Loc)
			}
		}
	})
}
