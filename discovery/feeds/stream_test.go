package feeds

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<rss version="2.0"><channel><title>&lol9;</title>
<item><title>&lol9;</title><link>https://example.org/laughs</link></item></channel></rss>`

// latin1 is ISO-8859-1: "é" is the single byte 0xE9.
const latin1 = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n" +
	"<rss version=\"2.0\"><channel><item><title>Caf\xe9</title><link>https://example.org/caf\xe9</link></item></channel></rss>"

// generated is an RSS feed of n items produced as it is read, so that a test or benchmark can
// hand a reader a feed far larger than the memory it may use.
type generated struct {
	n, next int
	pending []byte
	tail    bool
}

const generatedHead = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>Many</title><link>https://example.org/</link>
`

func newGenerated(n int) *generated { return &generated{n: n, pending: []byte(generatedHead)} }

func (g *generated) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		switch {
		case g.next < g.n:
			// About 100 bytes an item: 1,000,000 items make a 100 MB feed.
			g.pending = fmt.Appendf(g.pending, "<item><link>https://example.org/p/%d</link><dc:date>2024-03-01</dc:date></item>\n", g.next)
			g.next++
		case !g.tail:
			g.pending, g.tail = append(g.pending, "</channel></rss>\n"...), true
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// A feed of a million items (100 MB) yields its first 10,000 entries and is not read further.
// Before, the whole body up to the 10 MiB cap was parsed at once and the feed failed as too
// large: no entry was used.
func TestAMillionItemFeedYieldsEntriesUpToTheCap(t *testing.T) {
	g := newGenerated(1_000_000)
	got, err := Parse(g, "https://example.org/feed", Options{})
	if !errors.Is(err, ErrCut) {
		t.Fatalf("Parse: %v, want ErrCut", err)
	}
	if got == nil || len(got.Entries) != DefaultMaxEntries {
		t.Fatalf("got %v entries, want %d", got, DefaultMaxEntries)
	}
	if last := got.Entries[len(got.Entries)-1]; last.Loc != "https://example.org/p/9999" || !last.LastMod.Equal(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("last entry %+v", last)
	}
	if g.next > DefaultMaxEntries+100 {
		t.Errorf("the feed was read on to item %d after the cap of %d", g.next, DefaultMaxEntries)
	}
}

// Every item the feed holds is handed over when no cap stops it, one at a time.
func TestEachReadsEveryItem(t *testing.T) {
	n := 0
	res, err := Each(newGenerated(3_000), "https://example.org/feed", Options{MaxEntries: 1 << 30, MaxBytes: 1 << 30},
		func(u discovered.URL) error {
			if want := fmt.Sprintf("https://example.org/p/%d", n); u.Loc != want {
				return fmt.Errorf("entry %d is %s, want %s", n, u.Loc, want)
			}
			n++
			return nil
		})
	if err != nil || res.Items != 3_000 || res.Kept != 3_000 || n != 3_000 {
		t.Fatalf("Each: %+v, %v (%d entries)", res, err, n)
	}
}

// failing delivers body, then fails with err: a body the door cut, or a reset connection.
type failing struct {
	r   io.Reader
	err error
}

func (f *failing) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// A body that fails while read (the door's body cap) keeps the entries before, and the error says
// why. Before, a read error dropped the whole feed.
func TestAReadErrorKeepsTheEntriesBefore(t *testing.T) {
	doorCap := errors.New("body larger than the 10485760-byte cap for feed")
	cut := rss[:strings.Index(rss, "<item><title>Relative")]
	got, err := Parse(&failing{strings.NewReader(cut), doorCap}, "https://example.org/feed", Options{})
	if !errors.Is(err, ErrTruncated) || !errors.Is(err, doorCap) {
		t.Fatalf("Parse: %v, want ErrTruncated wrapping the read error", err)
	}
	want := []discovered.URL{{Loc: "https://example.org/news/1", LastMod: at("2024-03-01T10:00:00Z")}, {Loc: "https://example.org/?p=2"}}
	if got == nil || !reflect.DeepEqual(got.Entries, want) {
		t.Fatalf("entries %+v, want %+v", got, want)
	}
}

func TestHardening(t *testing.T) {
	huge := "<rss version=\"2.0\"><channel><item>" + strings.Repeat("<category>x</category>", 50_000) + "<link>/big</link></item>" +
		"<item><link>/after</link></item></channel></rss>"
	longRun := "<rss version=\"2.0\"><channel><item><description>" + strings.Repeat("x&lt;", 300<<10) + "</description><link>/long</link></item></channel></rss>"
	cases := []struct {
		name, body string
		want       []discovered.URL
		dropped    discovered.Dropped
	}{
		{"billion laughs: entities of a DOCTYPE are not expanded", billionLaughs, []discovered.URL{{Loc: "https://example.org/laughs"}}, discovered.Dropped{}},
		{"a UTF-8 byte order mark is skipped", "\xef\xbb\xbf<rss><channel><item><link>/bom</link></item></channel></rss>", []discovered.URL{{Loc: "https://example.org/bom"}}, discovered.Dropped{}},
		{"ISO-8859-1 is transcoded", latin1, []discovered.URL{{Loc: "https://example.org/caf%C3%A9"}}, discovered.Dropped{}},
		{"an item over 1 MiB is dropped, the next kept", huge, []discovered.URL{{Loc: "https://example.org/after"}}, discovered.Dropped{TooLong: 1}},
		{"a run of text over 256 KiB is cut, the item kept", longRun, []discovered.URL{{Loc: "https://example.org/long"}}, discovered.Dropped{}},
		{"control characters are removed", "<rss><channel><item><link>/a\x01\x02</link></item></channel></rss>", []discovered.URL{{Loc: "https://example.org/a"}}, discovered.Dropped{}},
		{"RSS 1.0 (RDF)", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel rdf:about="x"><items><rdf:Seq><rdf:li resource="/no"/></rdf:Seq></items></channel><item rdf:about="/r"><link>/r</link></item></rdf:RDF>`,
			[]discovered.URL{{Loc: "https://example.org/r"}}, discovered.Dropped{}},
		{"Atom xml:base", `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://example.org/blog/"><entry><link href="post"/></entry></feed>`,
			[]discovered.URL{{Loc: "https://example.org/blog/post"}}, discovered.Dropped{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(c.body), "https://example.org/feed", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Entries, c.want) || got.Dropped != c.dropped {
				t.Errorf("entries %+v dropped %+v, want %+v %+v", got.Entries, got.Dropped, c.want, c.dropped)
			}
		})
	}
}
