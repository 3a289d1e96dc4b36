package sitemap

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

// FuzzSitemap feeds arbitrary bodies through Open and Each. Whatever the bytes: no panic, only
// the package's errors, every URL handed on obeys discovery/discovered, the counts add up, no
// entry is read past the cap, and the outcome does not depend on how the body arrives.
func FuzzSitemap(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "sitemaps", "*"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("<urlset><url><loc>&amp&#x;&#99999999;&nbsp</loc></url><![CDATA[&]]]]></urlset>"))
	f.Add([]byte("<urlset>" + strings.Repeat("<url><loc>/a</loc></url>", fuzzMaxURLs+5) + "</urlset>"))
	f.Add([]byte(strings.Repeat("https://example.org/a\n", fuzzMaxURLs+1)))
	f.Fuzz(func(t *testing.T, body []byte) {
		whole, wholeRes, wholeErr := parseAll(t, bytes.NewReader(body))
		slow, slowRes, slowErr := parseAll(t, iotest.OneByteReader(bytes.NewReader(body)))
		if !reflect.DeepEqual(whole, slow) || wholeRes != slowRes || (wholeErr == nil) != (slowErr == nil) {
			t.Fatalf("outcome depends on chunking:\n whole %q %+v %v\n bytes %q %+v %v", whole, wholeRes, wholeErr, slow, slowRes, slowErr)
		}
		if wholeErr != nil {
			known := []error{ErrNotSitemap, ErrFeed, ErrTooLarge, ErrTruncated, ErrBroken, ErrCut}
			if !slicesContainsIs(wholeErr, known) {
				t.Fatalf("error outside the package's sentinels: %v", wholeErr)
			}
		}
		for _, loc := range whole {
			u, err := url.Parse(loc)
			if err != nil || u.Scheme != "https" || u.Hostname() != "example.org" || u.User != nil || u.Fragment != "" || len(loc) > discovered.MaxLen {
				t.Fatalf("handed on %q, which breaks the rule", loc)
			}
		}
		if wholeRes.Kept != len(whole) || wholeRes.Kept+wholeRes.Dropped.Total() != wholeRes.Entries {
			t.Fatalf("counts do not add up: %d delivered, %+v", len(whole), wholeRes)
		}
		if wholeRes.Entries > fuzzMaxURLs || errors.Is(wholeErr, ErrCut) && wholeRes.Entries != fuzzMaxURLs {
			t.Fatalf("%d entries read with a cap of %d (%v)", wholeRes.Entries, fuzzMaxURLs, wholeErr)
		}
	})
}

// fuzzMaxURLs is the entry cap of the fuzzed files, low enough for the fuzzer to reach.
const fuzzMaxURLs = 20

func parseAll(t *testing.T, r interface{ Read([]byte) (int, error) }) ([]string, Result, error) {
	f, err := Open(r, site+"/fuzz.xml", Options{MaxBytes: 1 << 20, MaxURLs: fuzzMaxURLs})
	if err != nil {
		return nil, Result{}, err
	}
	var got []string
	res, err := f.Each(func(u discovered.URL) error {
		got = append(got, u.Loc)
		return nil
	})
	if err != nil && strings.Contains(err.Error(), "Each called twice") {
		t.Fatal(err)
	}
	return got, res, err
}

func slicesContainsIs(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
