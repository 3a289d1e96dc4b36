package robots

import (
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Decision is the answer for one URL.
type Decision struct {
	Allowed bool
	Line    int    // the deciding rule's line number; 0 when no rule decided
	Rule    string // the deciding line's text; "" when no rule decided
	Reason  string // one sentence for an operator, citing the RFC 9309 section
	// Group names the group that applied: the product token as written in the file, "*", or ""
	// when no group applied.
	Group string
	// Cause is set when the origin, not a rule, decided: robots.txt could not be read and no
	// earlier copy applies (RFC 9309 §2.3.1.4). It says what went wrong: "answered 503", or the
	// network error.
	Cause string
}

// Decide reports whether the crawler with product token may fetch u (RFC 9309 §2.2).
//
// The group is chosen by exact, case-insensitive comparison of token with each group's
// user-agent tokens (never a prefix match); all groups naming it are combined; without one the
// "*" groups apply; without those everything is allowed. Within the group the rule matching the
// most octets of the normalised path and query wins, and an allow rule wins a tie. "/robots.txt"
// itself is always allowed. A nil u is decided as "/".
func (f *File) Decide(token string, u *url.URL) Decision {
	if d, ok := robotsTxtItself(u); ok {
		return d
	}
	groups, name := f.groupsFor(token)
	if groups == nil {
		return Decision{Allowed: true, Reason: "no group names this product token and there is no * group: nothing is restricted (RFC 9309 §2.2.1)"}
	}
	return f.decideIn(groups, name, u)
}

// decideIn decides u by the rules of groups, the groups that apply to the product token and
// are reported as name. u is not /robots.txt.
func (f *File) decideIn(groups []int, name string, u *url.URL) Decision {
	path := normalize(requestTarget(u))
	var best *Rule
	for _, gi := range groups {
		r := f.Groups[gi].bestMatch(path)
		if r != nil && r.beats(best) {
			best = r
		}
	}
	if best == nil {
		reason := "no rule of the group for this product token matches: allowed (RFC 9309 §2.2.2)"
		if name == "*" {
			reason = "no rule of the * group matches: allowed (RFC 9309 §2.2.2)"
		}
		return Decision{Allowed: true, Group: name, Reason: reason}
	}
	return Decision{Allowed: best.Allow, Line: best.Line, Rule: best.Text, Group: name, Reason: f.reason(best)}
}

// robotsTxtItself decides the robots.txt URL itself, which is always allowed (RFC 9309 §2.2.2:
// a crawler must be able to read the rules), also when the origin is otherwise disallowed. ok is
// false for any other URL.
func robotsTxtItself(u *url.URL) (Decision, bool) {
	if requestTarget(u) != "/robots.txt" {
		return Decision{}, false
	}
	return Decision{Allowed: true, Reason: "/robots.txt is always allowed (RFC 9309 §2.2.2)"}, true
}

// reason is the Decision.Reason of a deciding rule, built once per rule and kept, so that
// deciding allocates nothing for it.
func (f *File) reason(r *Rule) string {
	var slot *atomic.Pointer[string]
	if int(r.id) < len(f.reasons) {
		slot = &f.reasons[r.id]
		if s := slot.Load(); s != nil {
			return *s
		}
	}
	verb := "disallows"
	if r.Allow {
		verb = "allows"
	}
	s := "line " + strconv.Itoa(r.Line) + " " + strconv.Quote(shorten(r.Text)) + " " + verb +
		": the longest match in the group (RFC 9309 §2.2.2)"
	if slot != nil {
		slot.Store(&s)
	}
	return s
}

// CrawlDelay returns the Crawl-delay of the group that applies to token (chosen as in
// [File.Decide]); several values in combined groups give the largest. ok is false when the
// group has none.
func (f *File) CrawlDelay(token string) (d time.Duration, ok bool) {
	groups, _ := f.groupsFor(token)
	for _, gi := range groups {
		g := &f.Groups[gi]
		if g.HasCrawlDelay && (!ok || g.CrawlDelay > d) {
			d, ok = g.CrawlDelay, true
		}
	}
	return d, ok
}

// Sitemaps returns the file's Sitemap URLs resolved against base (normally the robots.txt URL;
// nil keeps only absolute URLs), http and https only, without duplicates, in file order.
func (f *File) Sitemaps(base *url.URL) []string {
	if f == nil {
		return nil
	}
	var out []string
	seen := make(map[string]bool)
	for _, l := range f.SitemapLines {
		u, err := url.Parse(l.Value)
		if err != nil {
			continue
		}
		if base != nil {
			u = base.ResolveReference(u)
		}
		if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Host == "" {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		s := u.String()
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// groupsFor returns the indices of the groups that apply to token and the name to report.
func (f *File) groupsFor(token string) ([]int, string) {
	if gs, name := f.groupsNaming(token); gs != nil {
		return gs, name
	}
	if f != nil && len(f.star) > 0 {
		return f.star, "*"
	}
	return nil, ""
}

// groupsNaming returns the indices of the groups whose user-agent lines name token (exactly,
// ignoring case) and the name to report, or nil: the "*" group is not consulted.
func (f *File) groupsNaming(token string) ([]int, string) {
	if f == nil || token == "" || token == "*" || f.index == nil {
		return nil, ""
	}
	gs, ok := f.index[token]
	if !ok {
		gs, ok = lookupFold(f.index, token)
	}
	if !ok {
		return nil, ""
	}
	return gs, groupName(f.Groups[gs[0]].Agents, token)
}

// lookupFold looks token up lower-cased; for the usual short token it lower-cases into a stack
// buffer, which the compiler lets index a map without allocating.
func lookupFold(m map[string][]int, token string) ([]int, bool) {
	var buf [64]byte
	var b []byte
	if len(token) <= len(buf) {
		b = buf[:0]
	}
	b = appendLower(b, token)
	gs, ok := m[string(b)]
	return gs, ok
}

// appendLower appends s lower-cased in ASCII only: product tokens are ASCII, and Unicode case
// folding would let a non-ASCII token (the Kelvin sign folds to 'k') match an ASCII one.
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func groupName(agents []string, token string) string {
	for _, a := range agents {
		if equalASCIIFold(a, token) {
			return a
		}
	}
	return token
}

func equalASCIIFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// shorten keeps a rule's text readable in a message; Decision.Rule keeps it whole.
func shorten(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

func quoteToken(t string) string {
	if t == "" {
		return "an empty product token"
	}
	return t
}

// bestMatch returns the group's matching rule with the highest priority (allow winning ties),
// or nil.
func (g *Group) bestMatch(path string) *Rule {
	var best *Rule
	if g.byHead != nil {
		// Only rules whose text before the first wildcard is a prefix of path can match.
		for n := 0; n <= len(path); n++ {
			for _, i := range g.byHead[path[:n]] {
				if r := &g.Rules[i]; r.beats(best) && r.match(path) {
					best = r
				}
			}
		}
		return best
	}
	for i := range g.Rules {
		if r := &g.Rules[i]; r.priority > 0 && r.beats(best) && r.match(path) {
			best = r
		}
	}
	return best
}

// beats reports whether r takes precedence over other (nil: any rule does): more octets win,
// allow wins a tie (RFC 9309 §2.2.2), and among equal rules the earlier line is reported, so
// the deciding line does not depend on the order rules are looked at.
func (r *Rule) beats(other *Rule) bool {
	switch {
	case other == nil:
		return true
	case r.priority != other.priority:
		return r.priority > other.priority
	case r.Allow != other.Allow:
		return r.Allow
	}
	return r.Line < other.Line
}

// requestTarget is the URL's path and query as sent, RFC 9309 §2.2.2's "path": "/" when empty.
func requestTarget(u *url.URL) string {
	if u == nil {
		return "/"
	}
	return u.RequestURI()
}

func newRule(allow bool, pattern string, line int, text string) Rule {
	r := Rule{Allow: allow, Pattern: pattern, Line: line, Text: text}
	if pattern == "" {
		return r
	}
	body := pattern
	if strings.HasSuffix(body, "$") {
		r.anchored = true
		body = body[:len(body)-1]
	}
	n := 0
	for {
		i := strings.IndexByte(body, '*')
		if i < 0 {
			break
		}
		seg := normalize(body[:i])
		r.segs = append(r.segs, seg)
		n += len(seg) + 1
		body = body[i+1:]
		for len(body) > 0 && body[0] == '*' {
			body = body[1:] // "**" matches what "*" matches
		}
	}
	seg := normalize(body)
	r.segs = append(r.segs, seg)
	n += len(seg)
	if r.anchored {
		n++
	}
	r.priority = n
	return r
}

// match reports whether the rule matches path, a normalised request target, from its first
// octet: '*' matches any run of octets, a final '$' the end (RFC 9309 §2.2.3).
func (r *Rule) match(path string) bool {
	segs := r.segs
	if len(segs) == 1 {
		if r.anchored {
			return path == segs[0]
		}
		return strings.HasPrefix(path, segs[0])
	}
	if !strings.HasPrefix(path, segs[0]) {
		return false
	}
	path = path[len(segs[0]):]
	last := len(segs) - 1
	for _, s := range segs[1:last] {
		// Taking the leftmost occurrence of each middle piece never loses a match: any later
		// occurrence leaves less room for the pieces that follow.
		i := strings.Index(path, s)
		if i < 0 {
			return false
		}
		path = path[i+len(s):]
	}
	if r.anchored {
		return strings.HasSuffix(path, segs[last])
	}
	return strings.Contains(path, segs[last])
}

// normalize brings a rule pattern piece or a request target into the form RFC 9309 §2.2.2
// compares: percent-encoded octets of unreserved characters are decoded ("%62%61%7A" is "baz"),
// other percent-encodings get upper-case hex, octets outside printable ASCII (and the few
// ASCII characters a URI never carries raw, such as space and '"') are percent-encoded, and
// reserved characters are compared as written (RFC 3986 §2.2: encoding one changes its
// meaning). "%2A" and "%24" are decoded so that, in a rule, they match a literal '*' and '$'
// (RFC 9309 §2.2.3) — the wildcard '*' and the final '$' never reach this function. A '%' not
// followed by two hex digits is a literal percent sign, "%25". Returns s itself when nothing
// changes, which is the common case and costs no allocation.
func normalize(s string) string {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' || !rawOK(c) {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				if isUnreserved(v) || v == '*' || v == '$' {
					b.WriteByte(v)
				} else {
					writeEscaped(&b, v)
				}
				i += 2
			} else {
				b.WriteString("%25")
			}
		case rawOK(c):
			b.WriteByte(c)
		default:
			writeEscaped(&b, c)
		}
	}
	return b.String()
}

const upperHex = "0123456789ABCDEF"

func writeEscaped(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&15])
}

// rawOK reports whether c stays as written: unreserved and reserved characters of RFC 3986.
func rawOK(c byte) bool {
	if isUnreserved(c) {
		return true
	}
	switch c {
	case ':', '/', '?', '#', '[', ']', '@', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	}
	return false
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}
