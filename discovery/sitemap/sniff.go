package sitemap

// This file decides what a file is from its first bytes, whatever its name or Content-Type says.

import (
	"bytes"
	"fmt"
	"strings"
)

// Format is what a file turned out to be.
type Format string

// The formats Open recognises.
const (
	URLSet Format = "urlset"       // <urlset>: page URLs
	Index  Format = "sitemapindex" // <sitemapindex>: URLs of further sitemap files
	Text   Format = "text"         // one URL per line (sitemaps.org "Text file")
	Feed   Format = "feed"         // RSS or Atom: read it with discovery/feeds
)

// sniffWindow is how much of the (decompressed) file is looked at to find the root element.
// Junk before "<?xml", comments and a DOCTYPE must fit in it.
const sniffWindow = 64 << 10

// sniffed is what the first bytes said.
type sniffed struct {
	format   Format
	start    int    // offset of the root element's '<' (XML) or of the first URL (text)
	junk     int    // bytes skipped before "<?xml"
	encoding string // the XML declaration's encoding label, as written
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// sniff reads the start of a file. It fails with a reason when the file is not a sitemap or feed;
// full reports that b is all of the file.
func sniff(b []byte, full bool) (sniffed, error) {
	i := 0
	if bytes.HasPrefix(b, utf8BOM) {
		i = len(utf8BOM)
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return sniffed{}, fmt.Errorf("the file is empty")
	}
	if hasFoldPrefix(b[i:], "http://") || hasFoldPrefix(b[i:], "https://") {
		return sniffed{format: Text, start: i}, nil
	}
	s := sniffed{start: i}
	if j := bytes.Index(b[i:], []byte("<?xml")); j >= 0 {
		s.start, s.junk = i+j, j
	} else if b[i] != '<' {
		return sniffed{}, fmt.Errorf("it starts with neither markup nor a URL")
	}
	root, at, enc, err := rootElement(b, s.start, full)
	if err != nil {
		return sniffed{}, err
	}
	s.start, s.encoding = at, enc
	switch {
	case root == "urlset":
		s.format = URLSet
	case root == "sitemapindex":
		s.format = Index
	case strings.EqualFold(root, "rss"), strings.EqualFold(root, "rdf"), strings.EqualFold(root, "feed"):
		s.format = Feed
	case strings.EqualFold(root, "html"):
		return sniffed{}, fmt.Errorf("it is an HTML page")
	default:
		return sniffed{}, fmt.Errorf("its root element is <%s>", root)
	}
	return s, nil
}

// rootElement walks the prolog from b[i] (XML declaration, processing instructions, comments,
// DOCTYPE) to the first element and returns its local name, its offset and the declared encoding.
func rootElement(b []byte, i int, full bool) (name string, at int, encoding string, err error) {
	cut := func(what string) error {
		if full {
			return fmt.Errorf("it ends inside %s, before any element", what)
		}
		return fmt.Errorf("no root element in its first %d KiB", sniffWindow>>10)
	}
	for {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		rest := b[i:]
		switch {
		case len(rest) == 0:
			return "", 0, "", cut("the prolog")
		case bytes.HasPrefix(rest, []byte("<?")):
			end := bytes.Index(rest, []byte("?>"))
			if end < 0 {
				return "", 0, "", cut("a processing instruction")
			}
			if bytes.HasPrefix(rest, []byte("<?xml")) && len(rest) > 5 && isSpace(rest[5]) {
				encoding = attribute(rest[:end], "encoding")
			}
			i += end + 2
		case bytes.HasPrefix(rest, []byte("<!--")):
			end := bytes.Index(rest[4:], []byte("-->"))
			if end < 0 {
				return "", 0, "", cut("a comment")
			}
			i += 4 + end + 3
		case bytes.HasPrefix(rest, []byte("<!")):
			end := declarationEnd(rest)
			if end < 0 {
				return "", 0, "", cut("a DOCTYPE")
			}
			i += end
		case rest[0] == '<':
			j := 1
			for j < len(rest) && !isSpace(rest[j]) && rest[j] != '>' && rest[j] != '/' {
				j++
			}
			if j == len(rest) {
				return "", 0, "", cut("the root element's name")
			}
			name = string(rest[1:j])
			if k := strings.LastIndexByte(name, ':'); k >= 0 {
				name = name[k+1:]
			}
			if name == "" {
				return "", 0, "", fmt.Errorf("it has a '<' without an element name")
			}
			return name, i, encoding, nil
		default:
			return "", 0, "", fmt.Errorf("it has text before its root element")
		}
	}
}

// declarationEnd returns the offset just past the '>' closing the "<!" declaration at the start
// of b, skipping a bracketed internal subset and quoted strings, or -1.
func declarationEnd(b []byte) int {
	depth := 0
	var quote byte
	for i := 2; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '>' && depth <= 0:
			return i + 1
		}
	}
	return -1
}

// attribute returns the value of the pseudo-attribute name in an XML declaration, or "".
func attribute(decl []byte, name string) string {
	s := string(decl)
	for {
		k := strings.Index(s, name)
		if k < 0 {
			return ""
		}
		s = strings.TrimLeft(s[k+len(name):], " \t\r\n")
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], " \t\r\n")
		if s == "" || (s[0] != '"' && s[0] != '\'') {
			return ""
		}
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return ""
		}
		return s[1 : 1+end]
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func hasFoldPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}
