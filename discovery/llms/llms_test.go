package llms

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

const fileURL = "https://example.org/llms.txt"

const spec = `# FastHTML

> FastHTML is a python library which brings together Starlette, Uvicorn, HTMX, and fastcore's ` + "`FT`" + `
> "FastTags" into a library for creating server-rendered hypermedia applications.

Important notes:

- Although parts of its API are inspired by FastAPI, it is *not* compatible with FastAPI syntax
- See [the intro](https://example.org/intro) for more

## Docs

- [FastHTML quick start](https://example.org/docs/tutorials/quickstart_for_web_devs.html.md): A brief overview of many FastHTML features
- [HTMX reference](/docs/htmx.md "HTMX"): Brief description of all HTMX attributes
* [Starlette docs](https://other.example/starlette.md): off the origin
+ [Secret](https://user:pw@example.org/private#frag)

## Examples

` + "```" + `
- [not a link, inside code](https://example.org/code)
` + "```" + `

## Empty section

## Optional

- [Starlette full documentation](<https://example.org/starlette-full.md>): A subset of the Starlette docs
- [Everything](/llms-full.txt)
`

func link(loc, name, notes string) Link {
	return Link{URL: discovered.URL{Loc: loc}, Name: name, Notes: notes}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name        string
		body        string
		contentType string
		want        *File
		err         error
	}{
		// A list item in the prose before the first H2 that does not start with a link is not one.
		{"the llmstxt.org example", spec, "text/markdown; charset=utf-8", &File{
			Title:   "FastHTML",
			Summary: "FastHTML is a python library which brings together Starlette, Uvicorn, HTMX, and fastcore's `FT` \"FastTags\" into a library for creating server-rendered hypermedia applications.",
			Sections: []Section{
				{Name: "Docs", Links: []Link{
					link("https://example.org/docs/tutorials/quickstart_for_web_devs.html.md", "FastHTML quick start", "A brief overview of many FastHTML features"),
					link("https://example.org/docs/htmx.md", "HTMX reference", "Brief description of all HTMX attributes"),
					link("https://example.org/private", "Secret", ""),
				}},
				{Name: "Optional", Optional: true, Links: []Link{
					link("https://example.org/starlette-full.md", "Starlette full documentation", "A subset of the Starlette docs"),
					link("https://example.org/llms-full.txt", "Everything", ""),
				}},
			},
			Full:    "https://example.org/llms-full.txt",
			Dropped: discovered.Dropped{OffScope: 1},
		}, nil},
		{"links before any H2", "# T\n- [a](/a)\n## S\n- [b](/b)\n", "", &File{Title: "T", Sections: []Section{
			{Links: []Link{link("https://example.org/a", "a", "")}},
			{Name: "S", Links: []Link{link("https://example.org/b", "b", "")}},
		}}, nil},
		{"no title but links", "- [a](/a)\n", "text/plain", &File{Sections: []Section{{Links: []Link{link("https://example.org/a", "a", "")}}}}, nil},
		{"a title only", "\ufeff# Just a title\r\n", "", &File{Title: "Just a title"}, nil},
		{"nested parentheses in a URL", "# T\n- [w](https://example.org/wiki/Go_(language)): notes (more)\n", "", &File{Title: "T", Sections: []Section{
			{Links: []Link{link("https://example.org/wiki/Go_(language)", "w", "notes (more)")}},
		}}, nil},
		{"not http", "# T\n- [m](mailto:a@example.org)\n- [j](javascript:alert(1))\n", "", &File{Title: "T", Dropped: discovered.Dropped{Invalid: 2}}, nil},
		{"served as HTML", spec, "text/html; charset=utf-8", nil, ErrNotLLMs},
		{"a body that is markup", "\n  <!DOCTYPE html><html><body># Not found</body></html>", "text/plain", nil, ErrNotLLMs},
		{"prose without title or links", "Not Found\n", "text/plain", nil, ErrNotLLMs},
		{"empty", "", "", nil, ErrNotLLMs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(c.body), fileURL, c.contentType)
			if !errors.Is(err, c.err) || (err != nil && c.err == nil) {
				t.Fatalf("Parse: %v, want %v", err, c.err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Parse =\n %+v\nwant\n %+v", got, c.want)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Big\n## S\n")
	for i := range MaxLinks + 5 {
		b.WriteString("- [p](/p" + strings.Repeat("x", i%7) + ")\n")
	}
	b.WriteString("- [long](/" + strings.Repeat("y", MaxLine) + ")\n")
	b.WriteString("- [name](/n): " + strings.Repeat("é", maxNotes) + "\n")
	f, err := Parse(strings.NewReader(b.String()), fileURL, "")
	if !errors.Is(err, ErrTooManyLinks) || !strings.Contains(err.Error(), "6 links beyond the first 10000") {
		t.Fatalf("Parse: %v; want ErrTooManyLinks saying 6 were not kept", err)
	}
	if n := len(f.Sections[0].Links); n != MaxLinks {
		t.Errorf("kept %d links, want %d", n, MaxLinks)
	}
	if f.Dropped.OverLimit != 6 || f.LongLines != 1 {
		t.Errorf("OverLimit %d, LongLines %d; want 6, 1", f.Dropped.OverLimit, f.LongLines)
	}

	f, err = Parse(strings.NewReader("# T\n- [n](/n): "+strings.Repeat("é", maxNotes)+"\n"), fileURL, "")
	if err != nil {
		t.Fatal(err)
	}
	if notes := f.Sections[0].Links[0].Notes; len(notes) > maxNotes || !strings.HasPrefix(notes, "éé") || strings.ContainsRune(notes, '\uFFFD') {
		t.Errorf("notes not cut on a rune boundary at %d bytes: %d bytes", maxNotes, len(notes))
	}

	huge := iotest.OneByteReader(strings.NewReader("# T\n- [a](/a)\n" + strings.Repeat("text\n", MaxBytes/5+1)))
	f, err = Parse(huge, fileURL, "")
	if !errors.Is(err, ErrTooLarge) || f == nil || len(f.Sections) != 1 {
		t.Errorf("a body past MaxBytes: %v, %+v; want ErrTooLarge and the links before", err, f)
	}
}

// doorCut delivers body, then fails with err, as the door's body cap does at its limit.
type doorCut struct {
	r   *strings.Reader
	err error
}

func (d *doorCut) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil {
		return n, d.err
	}
	return n, nil
}

// The door cuts an llms.txt at its 10 MiB cap with a read error. Before, that error made Parse
// drop all it had read (nil File); now the links before the cut are kept and the error says why.
func TestACutBodyKeepsTheLinksBefore(t *testing.T) {
	capErr := errors.New("body larger than the 10485760-byte cap for llms")
	var b strings.Builder
	b.WriteString("# Big\n## S\n")
	for i := 0; b.Len() < MaxBytes-100; i++ {
		b.WriteString("- [p](/p" + strings.Repeat("x", i%7) + ")\n")
	}
	f, err := Parse(&doorCut{strings.NewReader(b.String()), capErr}, fileURL, "text/plain")
	if !errors.Is(err, ErrTruncated) || !errors.Is(err, capErr) {
		t.Fatalf("Parse: %v; want ErrTruncated wrapping the door's error", err)
	}
	if !errors.Is(err, ErrTooManyLinks) {
		t.Errorf("Parse: %v; want the links over MaxLinks counted too", err)
	}
	if f == nil || len(f.Sections) != 1 || len(f.Sections[0].Links) != MaxLinks || f.Dropped.OverLimit == 0 {
		t.Fatalf("got %+v; want the first %d links and the rest counted", f, MaxLinks)
	}

	// A cut before anything usable is still an error, not a soft 404.
	f, err = Parse(&doorCut{strings.NewReader("Not"), capErr}, fileURL, "")
	if f != nil || !errors.Is(err, ErrTruncated) {
		t.Errorf("a cut body with nothing in it: %+v, %v; want nil and ErrTruncated", f, err)
	}
}
