package cookies

import "bytes"

// MaxNameLen is the longest cookie name the classifier looks at; a longer name is Unknown (and so
// refused unless allow-listed). Real names are a few dozen bytes; the bound keeps the case-folded
// copy on the stack.
const MaxNameLen = 256

// Classify returns the category of a cookie name. It is shorthand for Lookup(name).Category.
func Classify(name string) Category { return Lookup(name).Category }

// Lookup classifies a cookie name and says which rule decided. It does not allocate (after the
// first call, which loads the embedded data) and is safe for concurrent use.
//
// Order: our exact names, our longest prefix, our "*consent*" substring rule (all ASCII
// case-insensitive); then the Open Cookie Database's exact name, case-sensitively, then
// case-folded; then our session shapes ("_*_session", …) and the data's longest prefix (where a
// prefix of three characters or fewer only counts under the short-prefix rule), the longer literal
// part winning. A name with the "__Host-" or "__Secure-" prefix that nothing matched is looked up
// again without it. See the package documentation.
func Lookup(name string) Match {
	m := lookup(name, true)
	if m.Source != NoMatch {
		return m
	}
	for _, p := range namePrefixes {
		if len(name) > len(p) && hasPrefixFold(name, p) {
			return lookup(name[len(p):], false)
		}
	}
	return m
}

// namePrefixes are the cookie name prefixes of RFC 6265bis §4.1.3: they change what a browser
// requires of the cookie, not what the cookie is for. Without its prefix a name is looked up in
// our lists only: such a cookie is bound to the site that set it, so a vendor's entry in the data
// for the bare name ("id", a DoubleClick cookie) says little about it.
var namePrefixes = [...]string{"__Host-", "__Secure-"}

// lookup is Lookup without the prefix rule; withData false consults our lists only.
func lookup(name string, withData bool) Match {
	if name == "" || len(name) > MaxNameLen {
		return Match{}
	}
	t := loadTables()

	var buf [MaxNameLen]byte
	folded := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		folded[i] = c
	}

	if e, ok := t.ours.exact[string(folded)]; ok {
		return Match{Category: e.cat, Source: OurRule, Pattern: e.pattern}
	}
	for _, n := range t.ours.lengths {
		if n > len(folded) {
			continue
		}
		if e, ok := t.ours.prefix[string(folded[:n])]; ok {
			return Match{Category: e.cat, Source: OurRule, Pattern: e.pattern}
		}
	}
	if bytes.Contains(folded, consentWord) {
		return Match{Category: Consent, Source: OurRule, Pattern: "*consent*"}
	}

	sh, shaped := matchShape(folded)
	if !withData {
		if shaped {
			return sh.match(dataEntry{})
		}
		return Match{}
	}
	d := &t.data
	e, ok := d.exact[name]
	if !ok {
		e, ok = d.folded[string(folded)]
	}
	if ok {
		if shaped && e.cat.refinable() {
			return sh.match(e)
		}
		return e.match(DataExact)
	}
	for _, n := range d.lengths {
		if n > len(name) || shaped && n <= sh.literal() {
			continue
		}
		e, ok := d.prefix[name[:n]]
		if ok && shortPrefixApplies(name, n) {
			return e.match(DataPrefix)
		}
	}
	if shaped {
		return sh.match(dataEntry{})
	}
	return Match{}
}

// match is the Match of a shape; e is the data's entry for the same name, if any, whose category
// the shape refines.
func (s shape) match(e dataEntry) Match {
	return Match{Category: Session, Source: OurRule, Pattern: s.pattern, Platform: e.platform, DataCategory: e.dataCat}
}

// refinable reports whether our session shapes may refine a data entry of this category: the data
// files a site's own session cookie as Functional, Security or Necessary.
func (c Category) refinable() bool { return c == Functional || c == Security || c == Necessary }

func (e dataEntry) match(s Source) Match {
	return Match{Category: e.cat, Source: s, Pattern: e.pattern, Platform: e.platform, DataCategory: e.dataCat}
}

// ShortPrefixLen is the length up to which a data prefix needs the short-prefix rule.
const ShortPrefixLen = 3

// shortPrefixApplies is the short-prefix rule for the data prefix name[:n]. A prefix longer than
// ShortPrefixLen always applies. A shorter one applies when it ends in a separator ("mp_", "cc-":
// the vendor marked where its namespace ends), when it is the whole name, or when the rest of the
// name does not begin with an ASCII letter ("SR12345", "_s_x"). So Marfeel's "_s" does not catch
// "_session" and Adform's "CT" does not catch "CTX", while vendor-generated suffixes still match.
func shortPrefixApplies(name string, n int) bool {
	if n > ShortPrefixLen || n == len(name) {
		return true
	}
	switch name[n-1] {
	case '_', '-', '.', ':', '/':
		return true
	}
	c := name[n]
	return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
}
