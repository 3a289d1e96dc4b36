package robots

import (
	"bytes"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// FuzzParseDecide: any body, token and path give a decision without panicking, and serialising
// a parsed file and parsing it again gives the same file and the same decision.
func FuzzParseDecide(f *testing.F) {
	for _, c := range loadGoogleCases(f) {
		if len(c.Robots) < 400 {
			f.Add([]byte(c.Robots), c.Agent, strings.TrimPrefix(c.URL, "http://foo.bar"))
		}
	}
	f.Add([]byte("\xEF\xBBUser-agent: a\rDisallow: /%2A*$\r\nAllow /x%\nCrawl-delay: 1e400\n"), "a", "/%2a")
	f.Add([]byte("user-agent:*\ndisallow:*a*a*a*a*b$\nsitemap:\x00\xff"), "", "/aaaaaaaaaaaaaaaaaaa")
	f.Add([]byte{0xff, 0xfe, 0x00, ':', '\n', '#'}, "\xff", "/\xff?\x00")
	f.Fuzz(func(t *testing.T, body []byte, token, path string) {
		f1 := Parse(body)
		s1 := f1.String()
		u, err := url.Parse("http://h.example/" + strings.TrimPrefix(path, "/"))
		var d1 Decision
		if err == nil {
			d1 = f1.Decide(token, u)
			if lin := withoutIndex(f1).Decide(token, u); lin != d1 {
				t.Fatalf("the prefix index changed the decision for %s: %+v vs %+v", u, d1, lin)
			}
			f1.CrawlDelay(token)
			f1.Sitemaps(u)
		}
		if len(s1) > MaxBytes {
			return // the canonical form itself would be cut; stability is promised below the limit
		}
		f2 := Parse([]byte(s1))
		if s2 := f2.String(); s2 != s1 {
			t.Fatalf("parse→serialise→parse is not stable:\n%q\nthen\n%q", s1, s2)
		}
		if err == nil {
			if d2 := f2.Decide(token, u); d2.Allowed != d1.Allowed {
				t.Fatalf("the serialised file decides %s differently: %v (%s) vs %v (%s)", u, d1.Allowed, d1.Reason, d2.Allowed, d2.Reason)
			}
		}
	})
}

// genAgreeable builds, from rnd, a robots.txt and a path on which RFC 9309 and temoto/robotstxt
// must agree: user-agent lines first, tokens none of which is a prefix of another, no
// wildcards, '$' or percent signs, no two patterns of one length (temoto gives ties to the
// first rule, the RFC to allow), no empty groups or empty patterns.
func genAgreeable(rnd *rand.Rand) (body, path string) {
	const alphabet = "ab/"
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rnd.IntN(len(alphabet))])
		}
		return b.String()
	}
	agents := []string{"FooBot", "BarBot", "*"}
	usedLen := map[int]bool{}
	var b strings.Builder
	for range 1 + rnd.IntN(4) {
		first := rnd.IntN(len(agents))
		b.WriteString("User-agent: " + agents[first] + "\n")
		if rnd.IntN(3) == 0 {
			b.WriteString("User-agent: " + agents[(first+1)%len(agents)] + "\n")
		}
		rules := 0
		for range 1 + rnd.IntN(5) {
			p := "/" + word(rnd.IntN(7))
			if usedLen[len(p)] {
				continue
			}
			usedLen[len(p)] = true
			if rnd.IntN(2) == 0 {
				b.WriteString("Allow: " + p + "\n")
			} else {
				b.WriteString("Disallow: " + p + "\n")
			}
			rules++
		}
		if rules == 0 {
			b.WriteString("Disallow: /" + strings.Repeat("z", 10+len(usedLen)) + "\n")
			usedLen[11+len(usedLen)] = true
		}
	}
	return b.String(), "/" + word(rnd.IntN(9))
}

func agreesWithTemoto(t *testing.T, body, path string) {
	t.Helper()
	u, err := url.Parse("http://h.example" + path)
	if err != nil {
		t.Fatalf("generated a bad path %q: %v", path, err)
	}
	ours := Parse([]byte(body)).Decide("FooBot", u)
	data, err := robotstxt.FromString(body)
	if err != nil {
		t.Fatalf("temoto cannot parse a generated file: %v\n%s", err, body)
	}
	if theirs := collyTest(data, "FooBot", u); theirs != ours.Allowed {
		t.Fatalf("FooBot %s: ours %v (%s), temoto %v, on\n%s", path, ours.Allowed, ours.Reason, theirs, body)
	}
}

// TestDifferentialTemoto compares the two engines on 5,000 generated files where they must agree.
func TestDifferentialTemoto(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9309, 1))
	for range 5000 {
		body, path := genAgreeable(rnd)
		agreesWithTemoto(t, body, path)
	}
}

// FuzzDifferentialTemoto explores the same space from fuzzer-chosen seeds.
func FuzzDifferentialTemoto(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(9309), uint64(0))
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		body, path := genAgreeable(rand.New(rand.NewPCG(s1, s2)))
		agreesWithTemoto(t, body, path)
	})
}

// TestBadInput: garbage gives a decision, never a panic; the limit keeps large bodies cheap.
func TestBadInput(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	garbage := make([]byte, 1<<20)
	for i := range garbage {
		garbage[i] = byte(rnd.Uint32())
	}
	huge := bytes.Repeat([]byte("User-agent: *\nDisallow: /private\n"), 50<<20/33)
	longLine := "User-agent: *\nDisallow: /" + strings.Repeat("a", 100<<10) + "\nDisallow: /x\n"
	wildLine := "User-agent: *\nDisallow: /" + strings.Repeat("*a", 50<<10) + "b$\n"
	cases := []struct {
		name    string
		body    []byte
		path    string
		allowed bool
	}{
		{"binary garbage", garbage, "/x", true},
		{"50 MB body", huge, "/private/x", false},
		{"100 KB line", []byte(longLine), "/x", false},
		{"100 KB line does not swallow the next", []byte(longLine), "/aaa", true},
		{"100 KB of wildcards", []byte(wildLine), "/" + strings.Repeat("a", 3000), true},
		{"invalid UTF-8", []byte("User-agent: *\nDisallow: /\xff\xfe\nAllow: /\xc3\n"), "/%FF%FE", false},
		{"NUL bytes", []byte("User-agent: *\x00\nDisallow: /\x00\n"), "/x", true},
	}
	for _, c := range cases {
		f := Parse(c.body)
		if d := f.Decide("FooBot", mustURL(t, "http://h.example"+c.path)); d.Allowed != c.allowed {
			t.Errorf("%s: allowed = %v, want %v (%s)", c.name, d.Allowed, c.allowed, d.Reason)
		}
	}
	if f := Parse(huge); !f.Truncated || len(f.Groups) > MaxBytes/33+1 {
		t.Errorf("a 50 MB body: truncated %v with %d groups; want only the first %d bytes read", f.Truncated, len(f.Groups), MaxBytes)
	}
}

// withoutIndex returns a copy of f whose groups are decided by a linear scan.
func withoutIndex(f *File) *File {
	g := *f
	g.Groups = append([]Group(nil), f.Groups...)
	for i := range g.Groups {
		g.Groups[i].byHead = nil
	}
	return &g
}

// TestIndexedGroupsDecideAsLinearScan: the prefix index of large groups changes speed only.
func TestIndexedGroupsDecideAsLinearScan(t *testing.T) {
	rnd := rand.New(rand.NewPCG(32, 9309))
	const alphabet = "ab/*$%2A?"
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rnd.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 200 {
		var b strings.Builder
		b.WriteString("User-agent: FooBot\n")
		for range indexThreshold + rnd.IntN(100) {
			if rnd.IntN(2) == 0 {
				b.WriteString("Allow: ")
			} else {
				b.WriteString("Disallow: ")
			}
			if rnd.IntN(5) > 0 {
				b.WriteByte('/')
			}
			b.WriteString(word(rnd.IntN(6)) + "\n")
		}
		f := Parse([]byte(b.String()))
		if f.Groups[0].byHead == nil {
			t.Fatalf("a group of %d rules is not indexed", len(f.Groups[0].Rules))
		}
		lin := withoutIndex(f)
		for range 50 {
			u, err := url.Parse("http://h.example/" + strings.NewReplacer("%", "", "$", "", "*", "").Replace(word(rnd.IntN(8))))
			if err != nil {
				continue
			}
			if got, want := f.Decide("FooBot", u), lin.Decide("FooBot", u); got != want {
				t.Fatalf("%s: indexed %+v, linear %+v, on\n%s", u, got, want, b.String())
			}
		}
	}
}
