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
// case-insensitive); then the Open Cookie Database: exact name case-sensitively, exact name
// case-folded, longest prefix case-sensitively, where a prefix of three characters or fewer only
// counts under the short-prefix rule (see the package documentation).
func Lookup(name string) Match {
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

	d := &t.data
	if e, ok := d.exact[name]; ok {
		return e.match(DataExact)
	}
	if e, ok := d.folded[string(folded)]; ok {
		return e.match(DataExact)
	}
	for _, n := range d.lengths {
		if n > len(name) {
			continue
		}
		e, ok := d.prefix[name[:n]]
		if ok && shortPrefixApplies(name, n) {
			return e.match(DataPrefix)
		}
	}
	return Match{}
}

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
