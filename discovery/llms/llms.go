// Package llms reads /llms.txt (https://llmstxt.org/): a Markdown file with an H1 title, an
// optional blockquote summary, and H2 sections listing links as "- [name](url): notes". It
// returns the links a crawler may follow, in file order, with the "## Optional" section flagged:
// a planner reads it last and skips it when its page budget is nearly spent.
//
// The format is line-based and needs only headings, blockquotes, list items and one link per
// item, so it is read line by line here; a Markdown library would parse far more than is used,
// and none is among the project's dependencies.
//
// Links are resolved against the file's URL and kept only on the file's origin, by the rule of
// discovery/discovered (http(s), no fragment, no userinfo). An HTML page served at /llms.txt (a
// "soft 404") is not an llms.txt: [Parse] returns [ErrNotLLMs].
//
// # Memory
//
// Parse holds at most [MaxLinks] links; later ones are counted in Dropped.OverLimit and the error
// says how many ([ErrTooManyLinks]), with the file. A line longer
// than [MaxLine] bytes is skipped and counted in LongLines. A link's name is cut at 256 bytes and
// its notes at 512, the summary at 2 KiB, and at most [MaxBytes] of the body are read. So a
// parsed file costs at most about 30 MiB, whatever the body.
//
// A body cut short (longer than MaxBytes, or a read error such as the door's body cap) keeps the
// links read before the cut: Parse returns them with an error that says why.
package llms

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

// Limits of one file.
const (
	MaxLinks = 10_000   // links kept
	MaxLine  = 8 << 10  // bytes in one line
	MaxBytes = 10 << 20 // bytes read, as the door's cap for kind.LLMs
	maxName  = 256
	maxNotes = 512
	maxSumm  = 2 << 10
)

// Errors, for errors.Is.
var (
	// ErrNotLLMs: the body is not an llms.txt (an HTML page, or text with neither a title nor a
	// link). Treat it like a 404.
	ErrNotLLMs = errors.New("not an llms.txt")
	// ErrTooLarge: the body is longer than MaxBytes. The File returned with it holds what came
	// before.
	ErrTooLarge = fmt.Errorf("llms.txt longer than %d bytes", MaxBytes)
	// ErrTruncated: reading the body failed before its end; the error wraps the read error (the
	// door's body cap, a reset connection). The File returned with it holds what came before.
	ErrTruncated = errors.New("llms.txt cut before its end")
	// ErrTooManyLinks: the file lists more than MaxLinks links; the File returned with it holds
	// the first MaxLinks and counts the rest in Dropped.OverLimit.
	ErrTooManyLinks = fmt.Errorf("llms.txt lists more than %d links", MaxLinks)
)

// File is a parsed llms.txt.
type File struct {
	Title   string // the H1; "" when the file has none
	Summary string // the blockquote after the H1, its lines joined by spaces
	// Sections are the H2 sections that kept at least one link, in file order. Links listed
	// before the first H2 form a first section with an empty Name.
	Sections []Section
	// Full is the URL of /llms-full.txt when the file links it on its origin; "" otherwise.
	Full string

	Dropped   discovered.Dropped // links not kept, by reason
	LongLines int                // lines over MaxLine, skipped
}

// Section is one H2 section's links.
type Section struct {
	Name string
	// Optional marks the "## Optional" section: links that may be skipped when the budget is
	// short (llmstxt.org).
	Optional bool
	Links    []Link
}

// Link is one "- [name](url): notes" item. Its URL carries no LastMod: llms.txt gives no dates.
type Link struct {
	discovered.URL
	Name  string
	Notes string
}

// Parse reads an llms.txt body fetched from fileURL with the response's Content-Type (which may
// be ""). It fails with [ErrNotLLMs] for a soft 404 (and a nil File). A body past MaxBytes
// ([ErrTooLarge]), one whose reading failed ([ErrTruncated]) and one with more than MaxLinks
// links ([ErrTooManyLinks]) return the File read so far with the error.
func Parse(body io.Reader, fileURL, contentType string) (*File, error) {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return nil, fmt.Errorf("llms.txt %s: %w: served as %s", fileURL, ErrNotLLMs, mt)
	}
	filter, err := discovered.NewFilter(fileURL)
	if err != nil {
		return nil, fmt.Errorf("llms.txt %s: %w", fileURL, err)
	}

	p := parser{file: &File{}, filter: filter, current: -1}
	limited := &io.LimitedReader{R: body, N: MaxBytes + 1}
	br := bufio.NewReaderSize(limited, MaxLine)
	first, skipping := true, false
	var readErr error
	for {
		line, rerr := br.ReadSlice('\n')
		switch {
		case errors.Is(rerr, bufio.ErrBufferFull):
			if !skipping {
				p.file.LongLines++
			}
			skipping, first = true, false
			continue
		case skipping:
			skipping = false
		default:
			if first {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
				if t := bytes.TrimSpace(line); len(t) > 0 {
					first = false
					if t[0] == '<' {
						return nil, fmt.Errorf("llms.txt %s: %w: the body is markup (an HTML page?)", fileURL, ErrNotLLMs)
					}
				}
			}
			p.line(string(bytes.TrimRight(line, "\r\n")))
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			readErr = fmt.Errorf("%w after %d bytes: %w", ErrTruncated, MaxBytes+1-limited.N, rerr)
			break
		}
	}
	p.file.Dropped = filter.Dropped
	var cut error
	switch {
	case readErr != nil:
		cut = readErr
	case limited.N <= 0:
		cut = ErrTooLarge
	}
	if p.file.Title == "" && p.links == 0 {
		if cut != nil {
			return nil, fmt.Errorf("llms.txt %s: %w", fileURL, cut)
		}
		return nil, fmt.Errorf("llms.txt %s: %w: no \"# title\" and no links", fileURL, ErrNotLLMs)
	}
	over := p.filter.Dropped.OverLimit
	switch {
	case cut != nil && over > 0:
		return p.file, fmt.Errorf("llms.txt %s: %w; %w: %d links beyond the first %d not kept (before the cut)", fileURL, cut, ErrTooManyLinks, over, MaxLinks)
	case cut != nil:
		return p.file, fmt.Errorf("llms.txt %s: %w", fileURL, cut)
	case over > 0:
		return p.file, fmt.Errorf("llms.txt %s: %w: %d links beyond the first %d not kept", fileURL, ErrTooManyLinks, over, MaxLinks)
	}
	return p.file, nil
}

// parser holds the state between lines.
type parser struct {
	file   *File
	filter *discovered.Filter
	// heading is the current H2 section, not yet in file.Sections until it keeps a link (so
	// empty sections cost nothing); current is its index there once it is, else -1.
	heading Section
	current int
	sawH2   bool
	fenced  bool // inside a ``` code block, where nothing is a link
	quoting bool // reading the summary's blockquote
	links   int
}

func (p *parser) line(s string) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
		p.fenced = !p.fenced
		return
	}
	if p.fenced {
		return
	}
	if p.quoting {
		if q, ok := strings.CutPrefix(t, ">"); ok {
			p.summary(strings.TrimSpace(q))
			return
		}
		if t != "" || p.file.Summary != "" {
			p.quoting = false
		}
	}
	switch {
	case strings.HasPrefix(t, "# ") && p.file.Title == "" && !p.sawH2:
		p.file.Title = cut(strings.TrimSpace(t[2:]), maxName)
		p.quoting = true
	case strings.HasPrefix(t, "## "):
		name := cut(strings.TrimSpace(t[3:]), maxName)
		p.heading = Section{Name: name, Optional: strings.EqualFold(name, "Optional")}
		p.current, p.sawH2 = -1, true
	default:
		if name, ref, notes, ok := listLink(t); ok {
			p.link(name, ref, notes)
		}
	}
}

func (p *parser) summary(q string) {
	if q == "" || len(p.file.Summary) >= maxSumm {
		return
	}
	if p.file.Summary != "" {
		q = " " + q
	}
	p.file.Summary = cut(p.file.Summary+q, maxSumm)
}

func (p *parser) link(name, ref, notes string) {
	if p.links >= MaxLinks {
		p.filter.Dropped.OverLimit++
		return
	}
	loc, ok := p.filter.Keep(ref)
	if !ok {
		return
	}
	p.links++
	if p.current < 0 {
		p.file.Sections = append(p.file.Sections, p.heading)
		p.current = len(p.file.Sections) - 1
	}
	sec := &p.file.Sections[p.current]
	sec.Links = append(sec.Links, Link{
		URL:   discovered.URL{Loc: loc},
		Name:  cut(name, maxName),
		Notes: cut(notes, maxNotes),
	})
	if p.file.Full == "" && strings.HasSuffix(loc, "/llms-full.txt") {
		p.file.Full = loc
	}
}

// listLink reads a list item "- [name](url): notes" (bullet "-", "*" or "+"); the notes are
// whatever follows the link, without its leading ':'.
func listLink(t string) (name, ref, notes string, ok bool) {
	if len(t) < 2 || !strings.ContainsRune("-*+", rune(t[0])) || (t[1] != ' ' && t[1] != '\t') {
		return "", "", "", false
	}
	t = strings.TrimSpace(t[1:])
	if !strings.HasPrefix(t, "[") {
		return "", "", "", false
	}
	close := strings.Index(t, "](")
	if close < 0 {
		return "", "", "", false
	}
	name, rest := t[1:close], t[close+2:]
	depth, end := 1, -1
	for i := 0; i < len(rest) && end < 0; i++ {
		switch rest[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				end = i
			}
		}
	}
	if end < 0 {
		return "", "", "", false
	}
	ref = strings.TrimSpace(rest[:end])
	if i := strings.IndexAny(ref, " \t"); i >= 0 { // [name](url "title")
		ref = ref[:i]
	}
	ref = strings.TrimSuffix(strings.TrimPrefix(ref, "<"), ">")
	notes = strings.TrimSpace(rest[end+1:])
	notes = strings.TrimSpace(strings.TrimPrefix(notes, ":"))
	return strings.TrimSpace(name), ref, notes, true
}

// cut returns s cut to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
