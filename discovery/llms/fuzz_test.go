package llms

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzParse: whatever the body, no panic, only the package's errors, and every link obeys the
// rule (on the file's origin, no fragment, no userinfo) and the bounds; the result does not
// depend on how the body arrives.
func FuzzParse(f *testing.F) {
	f.Add([]byte(spec), "text/plain")
	f.Add([]byte("# T\n> s\n## Optional\n- [a](</a>): n\n```\n- [b](/b)\n"), "")
	f.Add([]byte("<html>"), "text/html")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		got, err := Parse(bytes.NewReader(body), fileURL, contentType)
		slow, slowErr := Parse(iotest.OneByteReader(bytes.NewReader(body)), fileURL, contentType)
		if (err == nil) != (slowErr == nil) || (got == nil) != (slow == nil) {
			t.Fatalf("outcome depends on chunking: %v / %v", err, slowErr)
		}
		if err != nil && !errors.Is(err, ErrNotLLMs) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrTooManyLinks) {
			t.Fatalf("unexpected error %v", err)
		}
		if (got == nil) != (err != nil && errors.Is(err, ErrNotLLMs)) {
			t.Fatalf("a file %v with %v: only a body that is no llms.txt yields none", got, err)
		}
		if got == nil {
			return
		}
		n := 0
		for _, s := range got.Sections {
			if len(s.Links) == 0 {
				t.Fatalf("empty section %q kept", s.Name)
			}
			for _, l := range s.Links {
				n++
				u, err := url.Parse(l.Loc)
				if err != nil || u.Scheme != "https" || u.Hostname() != "example.org" || u.User != nil || u.Fragment != "" {
					t.Fatalf("link %q breaks the rule", l.Loc)
				}
				if len(l.Name) > maxName || len(l.Notes) > maxNotes {
					t.Fatalf("name or notes over their cap")
				}
			}
		}
		if n > MaxLinks || len(got.Summary) > maxSumm {
			t.Fatalf("bounds broken: %d links, %d-byte summary", n, len(got.Summary))
		}
		if (got.Dropped.OverLimit > 0) != errors.Is(err, ErrTooManyLinks) {
			t.Fatalf("%d links over the limit, error %v: the drop must be said", got.Dropped.OverLimit, err)
		}
		// A cut at any byte keeps what came before it.
		if len(body) > 1 {
			cut, cutErr := Parse(&doorCut{strings.NewReader(string(body[:len(body)/2])), errors.New("cut")}, fileURL, contentType)
			if !errors.Is(cutErr, ErrTruncated) || (cut != nil && len(cut.Sections) > len(got.Sections)) {
				t.Fatalf("a cut body: %v", cutErr)
			}
		}
	})
}
