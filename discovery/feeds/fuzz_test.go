package feeds

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzParse: gofeed never panics through Parse, errors are the package's, and every entry obeys
// the rule (on the origin, no fragment, no userinfo) and the caps; the outcome does not depend on
// how the body arrives; only a body that is no feed yields no Feed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{rss, atom, jsonFeed, "<rss><channel><item><link>&#0;</link>", `{"items":[{"url":1}]}`,
		billionLaughs, latin1, `<feed><entry><link href="/a"/></entry><entry><link href="/b"/></entry>`,
		"<rss><channel><item><link>/a</link>\x01</item><item>", `{"a":[1,{"b":2}],"items":[{"url":"/a"},3,[]],"items":{}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := Parse(strings.NewReader(body), "https://example.org/feed", Options{MaxBytes: 1 << 16, MaxEntries: 50})
		slow, slowErr := Parse(iotest.OneByteReader(strings.NewReader(body)), "https://example.org/feed", Options{MaxBytes: 1 << 16, MaxEntries: 50})
		if !reflect.DeepEqual(got, slow) || (err == nil) != (slowErr == nil) {
			t.Fatalf("outcome depends on chunking: %v, %v / %v, %v", got, err, slow, slowErr)
		}
		if err != nil && !(errors.Is(err, ErrNotFeed) || errors.Is(err, ErrBroken) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrCut)) {
			t.Fatalf("unexpected error %v", err)
		}
		if (got == nil) != errors.Is(err, ErrNotFeed) {
			t.Fatalf("a feed %v with %v", got, err)
		}
		if got == nil {
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
