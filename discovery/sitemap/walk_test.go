package sitemap

import (
	"bytes"
	"testing"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

// An index that lists itself is read once: its own URL comes back from Each and Walk refuses it.
func TestWalkEndsAnIndexThatListsItself(t *testing.T) {
	var w Walk
	self := site + "/index-lists-itself.xml"
	if !w.Add(self, 1) {
		t.Fatal("the first file was refused")
	}
	var fetched []string
	for {
		p, ok := w.Next()
		if !ok {
			break
		}
		fetched = append(fetched, p.URL)
		if p.URL != self {
			continue // the other sitemap is not fetched in this test
		}
		f, err := Open(bytes.NewReader(fixture(t, "index-lists-itself.xml")), p.URL, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Each(func(u discovered.URL) error { w.Add(u.Loc, p.Depth+1); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	wantEq(t, "files fetched", fetched, []string{self, site + "/sitemap-2.xml"})
	wantEq(t, "Refused", w.Refused, WalkRefusals{Repeated: 1})
}

func TestWalk(t *testing.T) {
	cases := []struct {
		name    string
		walk    Walk
		adds    []Pending
		want    []Pending
		refused WalkRefusals
	}{
		{"a loop of two indexes ends",
			Walk{}, []Pending{{site + "/a.xml", 1}, {site + "/b.xml", 2}, {site + "/a.xml", 3}},
			[]Pending{{site + "/a.xml", 1}, {site + "/b.xml", 2}}, WalkRefusals{Repeated: 1}},
		{"nothing deeper than three files",
			Walk{}, []Pending{{site + "/1.xml", 1}, {site + "/2.xml", 2}, {site + "/3.xml", 3}, {site + "/4.xml", 4}},
			[]Pending{{site + "/1.xml", 1}, {site + "/2.xml", 2}, {site + "/3.xml", 3}}, WalkRefusals{TooDeep: 1}},
		{"MaxDepth narrows",
			Walk{MaxDepth: 1}, []Pending{{site + "/1.xml", 1}, {site + "/2.xml", 2}},
			[]Pending{{site + "/1.xml", 1}}, WalkRefusals{TooDeep: 1}},
		{"MaxFiles caps the distinct files",
			Walk{MaxFiles: 2}, []Pending{{site + "/1.xml", 1}, {site + "/2.xml", 1}, {site + "/3.xml", 1}, {site + "/1.xml", 1}},
			[]Pending{{site + "/1.xml", 1}, {site + "/2.xml", 1}}, WalkRefusals{OverLimit: 1, Repeated: 1}},
		{"fragment, userinfo and case do not make a new file",
			Walk{}, []Pending{{site + "/s.xml", 1}, {"HTTPS://user:pw@EXAMPLE.org/s.xml#top", 1}},
			[]Pending{{site + "/s.xml", 1}}, WalkRefusals{Repeated: 1}},
		{"userinfo never reaches the queue",
			Walk{}, []Pending{{"https://user:pw@example.org/s.xml", 1}},
			[]Pending{{site + "/s.xml", 1}}, WalkRefusals{}},
		{"only http(s)",
			Walk{}, []Pending{{"ftp://example.org/s.xml", 1}, {"/relative.xml", 1}},
			nil, WalkRefusals{Invalid: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := c.walk
			for _, a := range c.adds {
				w.Add(a.URL, a.Depth)
			}
			wantEq(t, "Len", w.Len(), len(c.want))
			var got []Pending
			for p, ok := w.Next(); ok; p, ok = w.Next() {
				got = append(got, p)
			}
			wantEq(t, "files", got, c.want)
			wantEq(t, "Refused", w.Refused, c.refused)
		})
	}
}
