package sitemap

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

// counting counts the bytes read through it.
type counting struct {
	r io.Reader
	n int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// A sitemap with more URLs than the cap is not read past it. Before, the whole file was read
// (and parsed) only to count the URLs beyond the cap: 15.8 MB for 50,000 kept, until the
// request's timeout.
func TestReadingStopsAtTheURLCap(t *testing.T) {
	body := urlset(5_000)
	per := len(body) / 5_000
	in := &counting{r: bytes.NewReader(body)}
	f, err := Open(in, site+"/sitemap.xml", Options{MaxURLs: 1_000})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Each(func(discovered.URL) error { return nil })
	if !errors.Is(err, ErrCut) || res.Kept != 1_000 {
		t.Fatalf("Each: kept %d, %v; want 1000 and ErrCut", res.Kept, err)
	}
	// What is read ahead is the parser's buffers: a few KiB past the 1,001st entry.
	if limit := int64(1_001*per + 64<<10); in.n > limit {
		t.Errorf("read %d bytes of %d; want at most %d (the first 1,001 entries and the buffers)", in.n, len(body), limit)
	}
	if !strings.Contains(err.Error(), "Options.MaxURLs") {
		t.Errorf("the error does not name the cap: %v", err)
	}
}

// The size cap is sitemaps.org's: 50 MB (52,428,800 bytes) uncompressed, for the file and, by the
// same constant, for the door's body cap of kind.Sitemap. A file of exactly that size is read
// whole; one byte more is cut. Raising the constant fails here.
func TestTheSizeCapIsSitemapsOrgs(t *testing.T) {
	const sitemapsOrg = 52_428_800
	for _, c := range []struct {
		size int
		err  error
	}{{sitemapsOrg, nil}, {sitemapsOrg + 1, ErrTooLarge}} {
		head := "<urlset><url><loc>" + site + "/a</loc></url>"
		tail := "</urlset>"
		body := io.MultiReader(strings.NewReader(head), &spaces{n: c.size - len(head) - len(tail)}, strings.NewReader(tail))
		f, err := Open(body, site+"/sitemap.xml", Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.Each(func(discovered.URL) error { return nil })
		if !errors.Is(err, c.err) || (c.err == nil && err != nil) || res.Kept != 1 {
			t.Errorf("a %d-byte sitemap: kept %d, %v; want %v", c.size, res.Kept, err, c.err)
		}
	}
}

// spaces yields n spaces.
type spaces struct{ n int }

func (s *spaces) Read(p []byte) (int, error) {
	if s.n <= 0 {
		return 0, io.EOF
	}
	k := min(len(p), s.n)
	for i := range p[:k] {
		p[i] = ' '
	}
	s.n -= k
	return k, nil
}
