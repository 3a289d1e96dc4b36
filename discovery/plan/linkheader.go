package plan

// This file decides which typed links a response's Link header carries (RFC 8288 §3), in the
// form discovery/links reports the <link> elements of a page's head.
//
// Written here rather than taken from a library: Link is not a Structured Field (RFC 8941), so
// dunglas/httpsfv does not read it, and no dependency the project allows parses RFC 8288.

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/discovery/links"
)

// maxLinkHeaderBytes bounds the Link header text read: a header that long is already far past
// what a start page advertises, and the bound keeps a hostile one from costing more.
const maxLinkHeaderBytes = 64 << 10

// headerLinks returns the typed links of h's Link fields (RFC 8288 §3) whose relation is one of
// those links.HeadLink reports (alternate, sitemap, the WordPress REST API, api-catalog),
// resolved against base (the response's URL; RFC 8288 §3.1) by the rule of
// discovery/discovered, in header order, at most links.MaxHeadLinks. A link with several of
// those relations is reported once for each, as discovery/links does. A target that is not an
// http(s) URL with a host, or is too long, is skipped; a malformed link-value ends the field it
// is in, keeping what came before. Only the first 64 KiB of the fields are read.
func headerLinks(h http.Header, base *url.URL) []links.HeadLink {
	if base == nil {
		return nil
	}
	targets, err := discovered.NewFilter(base.String())
	if err != nil {
		return nil
	}
	var out []links.HeadLink
	budget := maxLinkHeaderBytes
	for _, field := range h.Values("Link") {
		if budget <= 0 {
			break
		}
		if len(field) > budget {
			field = field[:budget]
		}
		budget -= len(field)
		p := linkParser{s: field}
		for len(out) < links.MaxHeadLinks {
			target, params, ok := p.next()
			if !ok {
				break
			}
			out = appendTyped(out, targets, target, params)
		}
	}
	if len(out) > links.MaxHeadLinks {
		out = out[:links.MaxHeadLinks]
	}
	return out
}

// appendTyped appends one HeadLink per known relation of a parsed link-value.
func appendTyped(out []links.HeadLink, targets *discovered.Filter, target string, params map[string]string) []links.HeadLink {
	rels, ok := params["rel"]
	if !ok {
		return out
	}
	var u *url.URL
	for _, tok := range strings.Fields(rels) {
		rel, ok := knownRel(tok)
		if !ok {
			continue
		}
		if u == nil {
			var err error
			if u, err = targets.Clean(target); err != nil {
				return out
			}
		}
		out = append(out, links.HeadLink{Rel: rel, URL: u, Type: params["type"], Title: params["title"]})
	}
	return out
}

// knownRel returns the relation tok names, if it is one links reports. Registered relation
// types compare case-insensitively (RFC 8288 §2.1.1); the WordPress one, a URI, is compared the
// same way, as discovery/links compares it in a page's head.
func knownRel(tok string) (links.Rel, bool) {
	for _, r := range []links.Rel{links.RelAlternate, links.RelSitemap, links.RelWordPressAPI, links.RelAPICatalog} {
		if strings.EqualFold(tok, string(r)) {
			return r, true
		}
	}
	return "", false
}

// linkParser reads the link-values of one Link field:
//
//	Link       = #link-value
//	link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
//	link-param = token BWS [ "=" BWS ( token / quoted-string ) ]
type linkParser struct {
	s string
	i int
}

// next returns the next link-value's target and its parameters (names lower-cased; the first of
// a repeated parameter wins, RFC 8288 §3.3 for rel). ok is false at the end of the field or at a
// link-value it cannot read.
func (p *linkParser) next() (target string, params map[string]string, ok bool) {
	p.skip(" \t,")
	if p.i >= len(p.s) || p.s[p.i] != '<' {
		return "", nil, false
	}
	end := strings.IndexByte(p.s[p.i:], '>')
	if end < 0 {
		return "", nil, false
	}
	target = p.s[p.i+1 : p.i+end]
	p.i += end + 1
	params = map[string]string{}
	for {
		p.skip(" \t")
		if p.i >= len(p.s) || p.s[p.i] == ',' {
			return target, params, true
		}
		if p.s[p.i] != ';' {
			return "", nil, false
		}
		p.i++
		p.skip(" \t")
		name := strings.ToLower(p.token())
		if name == "" {
			return "", nil, false
		}
		p.skip(" \t")
		value := ""
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			p.skip(" \t")
			var ok bool
			if value, ok = p.value(); !ok {
				return "", nil, false
			}
		}
		if _, seen := params[name]; !seen {
			params[name] = value
		}
	}
}

func (p *linkParser) skip(chars string) {
	for p.i < len(p.s) && strings.IndexByte(chars, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads an RFC 9110 token (with '*', for names such as title*).
func (p *linkParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// value reads a quoted-string (RFC 9110 §5.6.4), unescaping quoted-pairs, or an unquoted
// value up to the next ";", "," or space. RFC 8288 asks for a token there, but servers send
// unquoted media types ("type=application/rss+xml") and relation URIs, so more is accepted.
func (p *linkParser) value() (string, bool) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(";, \t", rune(p.s[p.i])) {
			p.i++
		}
		return p.s[start:p.i], true
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), true
		case c == '\\' && p.i+1 < len(p.s):
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", false
}

func isTokenChar(c byte) bool {
	return c > ' ' && c < 0x7f && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, rune(c))
}
