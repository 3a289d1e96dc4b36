// This file decides what the demo's pages say: the embedded Markdown and text files, with the
// origins' URLs filled in, and the title and links each HTML page is built from.

package demosite

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"text/template"
)

// content holds one folder per origin: Markdown pages (index.md is the origin's home page), and
// text files served as they are (robots.txt, llms.txt). Every file is a text/template that may name the
// origins' base URLs: {{.Blog}}, {{.Shop}}, {{.Docs}}, {{.Archive}}.
//
//go:embed content
var content embed.FS

// bases are the origins' base URLs, as the content files name them.
type bases struct {
	Blog, Shop, Docs, Archive string
}

// page is one Markdown file of an origin, rendered.
type page struct {
	path     string // the HTML page's URL path: "/", "/about", "/2026/hello-crawlers"
	markdown string // the URL path of its Markdown version: "/index.md", "/about.md", …
	title    string
	links    []string
	text     []byte // the Markdown, origins filled in
}

// contentOf renders the origin's folder: its Markdown pages, in file order, and its text files
// (robots.txt, llms.txt) by name.
func contentOf(folder string, b bases) (pages []page, texts map[string][]byte, err error) {
	texts = map[string][]byte{}
	root := path.Join("content", folder)
	err = fs.WalkDir(content, root, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := render(name, b)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(name, root)
		if path.Ext(name) != ".md" {
			texts[strings.TrimPrefix(rel, "/")] = text
			return nil
		}
		rel = strings.TrimSuffix(rel, ".md")
		p := page{path: rel, markdown: rel + ".md", text: text}
		if rel == "/index" {
			p.path = "/"
		}
		p.title, p.links = outline(string(text))
		if p.title == "" {
			return fmt.Errorf("demosite: %s has no title: its first line must be a Markdown heading (# Title)", name)
		}
		pages = append(pages, p)
		return nil
	})
	return pages, texts, err
}

// render reads an embedded file and fills in the origins' URLs.
func render(name string, b bases) ([]byte, error) {
	raw, err := content.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("demosite: %w", err)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("demosite: %w", err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, b); err != nil {
		return nil, fmt.Errorf("demosite: %w", err)
	}
	return out.Bytes(), nil
}

// inlineLink matches a Markdown inline link, [text](target), whose target has no spaces or
// parentheses; the content files use no other kind.
var inlineLink = regexp.MustCompile(`\[[^\]\n]*\]\(([^()\s]+)\)`)

// outline returns a Markdown page's title — its first line, when that is a level-1 heading — and
// the targets of its inline links, in order, images excluded. A page without a heading has
// the title "". It is only as lenient as the demo's own files need: it is no Markdown parser.
func outline(md string) (title string, links []string) {
	first, _, _ := strings.Cut(md, "\n")
	if t, ok := strings.CutPrefix(strings.TrimRight(first, "\r"), "# "); ok {
		title = strings.TrimSpace(t)
	}
	for _, m := range inlineLink.FindAllStringSubmatchIndex(md, -1) {
		if m[0] > 0 && md[m[0]-1] == '!' {
			continue
		}
		links = append(links, md[m[2]:m[3]])
	}
	return title, links
}
