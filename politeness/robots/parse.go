// Package robots decides robots.txt: an RFC 9309 parser and matcher ([Parse], [File.Decide]) and
// the per-origin lifecycle of fetched files ([Keeper]).
//
// Most callers never parse a file themselves: the door's robots gate asks a [Keeper] for the
// [Entry] of a URL's origin and calls [Entry.Decide]. [Parse] and [File.Decide] are for tools
// (the etiquette robots command) and tests.
//
// The keeper's entries live in a [Store]: memory by default, or a store several processes share,
// so that one process fetches an origin's robots.txt and the others use its result.
//
// The project writes its own engine instead of using temoto/robotstxt (Colly's checker) because
// temoto departs from RFC 9309 inside its parser and matcher, whose rule lists are unexported, so
// no wrapper can correct it: a rule before the first user-agent line makes the whole file a parse
// error, a tie goes to the first rule instead of the allow rule, user agents match by prefix,
// paths are compared without percent-encoding normalisation, and Crawl-delay ends a group.
// The command line's robots --compare-colly keeps temoto as a reference for what a Colly scraper used to decide.
package robots

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// MaxBytes is how much of a robots.txt body [Parse] reads; the rest is ignored and
// [File].Truncated is set. RFC 9309 §2.5 requires a parsing limit of at least 500 KiB. It is the
// one figure for robots.txt: the keeper reads no more and the door's body cap for kind.Robots is
// the same, so a longer robots.txt is reported as cut (a "truncated" notice).
const MaxBytes = 512 << 10

// maxCrawlDelay bounds a Crawl-delay value; a larger one is treated as a bad value (ignored).
// A day between requests is already "do not crawl"; without a bound the seconds would overflow
// a time.Duration.
const maxCrawlDelay = 24 * 60 * 60

// File is a parsed robots.txt. It is immutable after [Parse] and safe for concurrent use.
// The zero value (and a nil *File) is an empty file: everything is allowed.
type File struct {
	// Groups in file order. Groups naming the same product token are kept apart here and
	// combined when deciding (RFC 9309 §2.2.1).
	Groups []Group
	// SitemapLines are the Sitemap lines in file order, values as written (RFC 9309 §2.2.4).
	// [File.Sitemaps] resolves them.
	SitemapLines []Line
	// Ignored lists lines that were understood but could not apply: a rule before any
	// user-agent line, a bad Crawl-delay value. Unknown keys are not listed.
	Ignored []Line
	// Truncated reports that the body was longer than [MaxBytes] and the rest was ignored.
	Truncated bool

	index   map[string][]int         // lower-cased product token → indices into Groups
	star    []int                    // groups for "*"
	reasons []atomic.Pointer[string] // Decision.Reason per rule id, built on first use
}

// Line is one line of the file, for diagnostics.
type Line struct {
	Number int    // 1-based line number in the body
	Text   string // the line as written, surrounding whitespace trimmed
	Value  string // the value after the key, trimmed, comment removed
}

// Group is a run of user-agent lines and the records that follow it up to the next user-agent
// line after a rule (RFC 9309 §2.1).
type Group struct {
	// Agents are the product tokens as written, cut to their leading token characters
	// ("FooBot/1.2" → "FooBot"), or "*". A user-agent value with no token characters is kept
	// as "" and matches no crawler.
	Agents []string
	// Line is the line number of the group's first user-agent line.
	Line  int
	Rules []Rule
	// CrawlDelay is the group's Crawl-delay (the largest, if several); valid when HasCrawlDelay.
	// Crawl-delay is not part of RFC 9309; it is widely published and honoured as a floor.
	CrawlDelay    time.Duration
	HasCrawlDelay bool

	// byHead indexes the rules of a large group by the literal text before their first
	// wildcard, so that deciding looks up the path's prefixes instead of testing every rule.
	byHead map[string][]int32
}

// indexThreshold is the number of rules from which a group is indexed: below it a linear scan
// of cheap prefix tests is faster than the lookups.
const indexThreshold = 32

// Rule is one allow or disallow line.
type Rule struct {
	Allow bool
	// Pattern is the value as written. An empty pattern matches nothing (RFC 9309 §2.2.2).
	Pattern string
	Line    int    // 1-based line number
	Text    string // the whole line as written

	id       int32    // index into File.reasons
	segs     []string // normalised literal pieces between '*' wildcards
	anchored bool     // the pattern ended in '$'
	priority int      // octets of the normalised pattern, '*' and '$' counted as one each
}

// key says what a line is.
type key int

const (
	keyUnknown key = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keySitemap
	keyCrawlDelay
)

// keys maps every spelling the parser accepts. Beside the RFC 9309 names it accepts the
// misspellings Google's parser accepts (robots.cc), because site owners write them and mean
// them: a crawler that ignores "Disalow: /" crawls what the owner tried to close.
var keys = map[string]key{
	"user-agent": keyUserAgent, "useragent": keyUserAgent, "user agent": keyUserAgent, "user_agent": keyUserAgent,
	"allow":    keyAllow,
	"disallow": keyDisallow, "dissallow": keyDisallow, "dissalow": keyDisallow, "disalow": keyDisallow,
	"diasllow": keyDisallow, "disallaw": keyDisallow,
	"sitemap": keySitemap, "site-map": keySitemap,
	"crawl-delay": keyCrawlDelay, "crawldelay": keyCrawlDelay, "crawl delay": keyCrawlDelay, "crawl_delay": keyCrawlDelay,
}

func keyOf(k string) key {
	if len(k) > len("crawl-delay") {
		return keyUnknown
	}
	var buf [16]byte
	b := buf[:0]
	for i := 0; i < len(k); i++ {
		c := k[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return keys[string(b)] // the compiler does not allocate for a map index by string(bytes)
}

// Parse reads a robots.txt body. It never fails: lines it cannot use are skipped, as RFC 9309
// §2.2 asks ("crawlers MUST try to parse each line"). It reads the first [MaxBytes] of body; if
// the body is longer, a line cut by the limit is dropped too, so a rule is never shortened
// into a different rule.
//
// Accepted syntax: lines end in CR, LF or CRLF (mixed is fine); a UTF-8 byte order mark at the
// start, whole or partial, is skipped; '#' starts a comment anywhere; keys are case-insensitive
// and may be misspelled as Google's parser allows; a missing colon is tolerated when the line
// is exactly "key value"; user-agent values are cut to their leading token characters (letters,
// digits, '-' and '_'; digits beyond RFC 9309's grammar so that tokens such as FAU-INF12-Bot
// work); rules before any user-agent line are ignored; unknown records, Sitemap and Crawl-delay
// lines do not end a group's user-agent run.
func Parse(body []byte) *File {
	f := &File{}
	if len(body) > MaxBytes {
		f.Truncated = true
		body = body[:MaxBytes]
		cut := len(body)
		for cut > 0 && body[cut-1] != '\n' && body[cut-1] != '\r' {
			cut--
		}
		body = body[:cut]
	}
	text := string(body)
	const bom = "\xEF\xBB\xBF"
	start := 0
	for start < len(bom) && start < len(text) && text[start] == bom[start] {
		start++
	}

	var (
		cur      = -1 // index of the group being built
		inAgents bool // the last user-agent/rule line was a user-agent line
	)
	lineNo, rules := 0, 0
	for pos := start; pos < len(text); {
		end := pos
		for end < len(text) && text[end] != '\n' && text[end] != '\r' {
			end++
		}
		raw := text[pos:end]
		next := end
		if next < len(text) {
			if text[next] == '\r' && next+1 < len(text) && text[next+1] == '\n' {
				next += 2
			} else {
				next++
			}
		}
		pos = next
		lineNo++

		content := raw
		if i := strings.IndexByte(content, '#'); i >= 0 {
			content = content[:i]
		}
		content = trim(content)
		if content == "" {
			continue
		}
		k, value, ok := splitKeyValue(content)
		if !ok {
			continue
		}
		line := Line{Number: lineNo, Text: trim(raw), Value: value}
		switch keyOf(k) {
		case keyUserAgent:
			if cur < 0 || !inAgents {
				f.Groups = append(f.Groups, Group{Line: lineNo})
				cur = len(f.Groups) - 1
			}
			f.Groups[cur].Agents = append(f.Groups[cur].Agents, agentToken(value))
			inAgents = true
		case keyAllow, keyDisallow:
			if cur < 0 {
				f.Ignored = append(f.Ignored, line)
				continue
			}
			r := newRule(keyOf(k) == keyAllow, value, lineNo, line.Text)
			r.id = int32(rules)
			rules++
			f.Groups[cur].Rules = append(f.Groups[cur].Rules, r)
			inAgents = false
		case keyCrawlDelay:
			d, ok := parseCrawlDelay(value)
			if cur < 0 || !ok {
				f.Ignored = append(f.Ignored, line)
				continue
			}
			g := &f.Groups[cur]
			if !g.HasCrawlDelay || d > g.CrawlDelay {
				g.CrawlDelay = d
			}
			g.HasCrawlDelay = true
		case keySitemap:
			if value != "" {
				f.SitemapLines = append(f.SitemapLines, line)
			}
		}
	}
	f.reasons = make([]atomic.Pointer[string], rules)
	f.buildIndex()
	return f
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

func trim(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// splitKeyValue splits "key: value". Without a colon it accepts "key value" when the value is a
// single word, as Google's parser does; anything else is not a record.
func splitKeyValue(s string) (k, v string, ok bool) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return trim(s[:i]), trim(s[i+1:]), true
	}
	i := 0
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	k, v = s[:i], trim(s[i:])
	if v == "" {
		return "", "", false
	}
	for j := 0; j < len(v); j++ {
		if isSpace(v[j]) {
			return "", "", false
		}
	}
	return k, v, true
}

// agentToken cuts a user-agent value to its product token (RFC 9309 §2.2.1): "*" alone (or
// followed by whitespace) is the global group; otherwise the leading letters, digits, '-' and '_'.
func agentToken(v string) string {
	if len(v) > 0 && v[0] == '*' && (len(v) == 1 || isSpace(v[1])) {
		return "*"
	}
	i := 0
	for i < len(v) && isTokenChar(v[i]) {
		i++
	}
	return v[:i]
}

func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

func parseCrawlDelay(v string) (time.Duration, bool) {
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(s) || s < 0 || s > maxCrawlDelay {
		return 0, false
	}
	// Rounded, not truncated, so that formatting the delay back as seconds and parsing it again
	// gives the same duration (String round trip).
	return time.Duration(math.Round(s * float64(time.Second))), true
}

func (f *File) buildIndex() {
	for gi := range f.Groups {
		g := &f.Groups[gi]
		if len(g.Rules) < indexThreshold {
			continue
		}
		g.byHead = make(map[string][]int32)
		for ri, r := range g.Rules {
			if r.priority > 0 {
				g.byHead[r.segs[0]] = append(g.byHead[r.segs[0]], int32(ri))
			}
		}
	}
	for gi, g := range f.Groups {
		for ai, a := range g.Agents {
			if a == "" || containsFold(g.Agents[:ai], a) {
				continue
			}
			if a == "*" {
				f.star = append(f.star, gi)
				continue
			}
			if f.index == nil {
				f.index = make(map[string][]int)
			}
			l := string(appendLower(nil, a))
			f.index[l] = append(f.index[l], gi)
		}
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if equalASCIIFold(x, s) {
			return true
		}
	}
	return false
}

// String serialises the file in a canonical form: groups in file order, each with its
// user-agent lines, its Crawl-delay and its rules, then the Sitemap lines. Parsing the result
// gives the same groups, rules and sitemaps (line numbers aside), as long as the result fits
// in [MaxBytes].
func (f *File) String() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	for i, g := range f.Groups {
		if i > 0 {
			b.WriteByte('\n')
		}
		for _, a := range g.Agents {
			b.WriteString("User-agent: ")
			b.WriteString(a)
			b.WriteByte('\n')
		}
		if g.HasCrawlDelay {
			b.WriteString("Crawl-delay: ")
			b.WriteString(strconv.FormatFloat(g.CrawlDelay.Seconds(), 'f', -1, 64))
			b.WriteByte('\n')
		}
		for _, r := range g.Rules {
			if r.Allow {
				b.WriteString("Allow:")
			} else {
				b.WriteString("Disallow:")
			}
			if r.Pattern != "" {
				b.WriteByte(' ')
				b.WriteString(r.Pattern)
			}
			b.WriteByte('\n')
		}
	}
	if len(f.SitemapLines) > 0 && len(f.Groups) > 0 {
		b.WriteByte('\n')
	}
	for _, s := range f.SitemapLines {
		b.WriteString("Sitemap: ")
		b.WriteString(s.Value)
		b.WriteByte('\n')
	}
	return b.String()
}
