package cookies

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// The vendored Open Cookie Database snapshot (Apache-2.0, see data/LICENSE and data/PROVENANCE.md).
//
//go:embed data/open-cookie-database.csv
var openCookieDatabase []byte

// Provenance of the embedded snapshot; TestVendoredDataMatchesProvenance checks both against the
// bytes and data/PROVENANCE.md.
const (
	DataCommit = "0ee5a17fe1cb002943f89370d24fc26a4226061c"
	DataSHA256 = "0a8d78901ae55d859e34f7cc760262819af4c764b4f9bc3bbdeea2296e31f156"
)

// DataInfo describes the loaded Open Cookie Database: what was read and how its quirks were
// resolved. Err is non-nil when the embedded file could not be read at all; the classifier then
// runs on our own lists alone and every other name is Unknown (so refused unless allow-listed).
type DataInfo struct {
	Commit, SHA256 string
	Entries        int // data rows read
	Exact          int // distinct exact names
	Prefixes       int // distinct prefixes
	Duplicates     int // rows repeating an earlier row's name (as exact name or prefix)
	Conflicts      int // duplicates filed under another category than the first row; the more restrictive entry wins
	CaseCollisions int // groups of exact names equal but for case
	Placeholders   int // names whose NNN, * or %INTEGER% tail was read as a prefix
	Cleaned        int // names that carried a tab, a soft hyphen or surrounding space
	Reclassified   int // entries a platform rule moved to Consent, AntiBot or Login
	Skipped        int // rows with an empty name or a category outside the known six
	Err            error
}

type dataEntry struct {
	cat, dataCat Category
	platform     string
	pattern      string // the name or prefix as it appears after cleaning
}

type dataTable struct {
	exact   map[string]dataEntry // case-sensitive
	folded  map[string]dataEntry // lower-cased exact names
	prefix  map[string]dataEntry // case-sensitive
	lengths []int                // distinct prefix lengths, longest first
	info    DataInfo
}

// tables holds everything Lookup reads; built once, read-only afterwards.
type tables struct {
	ours ourTable
	data dataTable
}

var loadTables = sync.OnceValue(func() *tables {
	d, err := parseData(bytes.NewReader(openCookieDatabase))
	d.info.Err = err
	d.info.Commit, d.info.SHA256 = DataCommit, DataSHA256
	return &tables{ours: compileOurRules(), data: d}
})

// Data reports what was loaded from the embedded Open Cookie Database snapshot.
func Data() DataInfo { return loadTables().data.info }

var dataCategories = map[string]Category{
	"functional": Functional, "security": Security, "necessary": Necessary,
	"personalization": Personalization, "analytics": Analytics, "marketing": Marketing,
}

// placeholders are name tails the data uses for a variable part; a name ending in one is a prefix.
var placeholders = []string{"%INTEGER%", "NNN", "*"}

// parseData reads the Open Cookie Database CSV. Columns are found by header name so an upstream
// reordering fails loudly here instead of classifying by the wrong column. It returns what it
// could read together with the first error that stopped it.
func parseData(r io.Reader) (dataTable, error) {
	t := dataTable{exact: map[string]dataEntry{}, folded: map[string]dataEntry{}, prefix: map[string]dataEntry{}}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return t, fmt.Errorf("cookies: reading the Open Cookie Database header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	need := []string{"Platform", "Category", "Cookie / Data Key name", "Wildcard match"}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return t, fmt.Errorf("cookies: Open Cookie Database has no %q column (header %q); the vendored file is not the expected format", n, header)
		}
	}
	iPlat, iCat, iName, iWild := col["Platform"], col["Category"], col["Cookie / Data Key name"], col["Wildcard match"]
	width := max(iPlat, iCat, iName, iWild) + 1

	spellings := map[string]map[string]bool{} // folded key -> exact spellings, to count case collisions
	firstCat := map[string]Category{}         // cleaned name -> first row's data category, to count duplicates
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return t, fmt.Errorf("cookies: reading the Open Cookie Database: %w", err)
		}
		if len(rec) < width {
			t.info.Skipped++
			continue
		}
		t.info.Entries++
		dataCat, ok := dataCategories[strings.ToLower(strings.TrimSpace(rec[iCat]))]
		name, cleaned := cleanName(rec[iName])
		if !ok || name == "" {
			t.info.Skipped++
			continue
		}
		if cleaned {
			t.info.Cleaned++
		}
		if c, dup := firstCat[name]; dup {
			t.info.Duplicates++
			if c != dataCat {
				t.info.Conflicts++
			}
		} else {
			firstCat[name] = dataCat
		}
		isPrefix := strings.TrimSpace(rec[iWild]) == "1"
		for _, p := range placeholders {
			if strings.HasSuffix(name, p) && len(name) > len(p) {
				name, isPrefix = strings.TrimSuffix(name, p), true
				t.info.Placeholders++
				break
			}
		}
		platform := strings.TrimSpace(rec[iPlat])
		cat := dataCat
		if pc, ok := platformRules[platform]; ok && !dataCat.NeverKept() {
			cat = pc
			t.info.Reclassified++
		}
		e := dataEntry{cat: cat, dataCat: dataCat, platform: platform, pattern: name}
		if isPrefix {
			t.put(t.prefix, name, e)
			continue
		}
		t.put(t.exact, name, e)
		key := strings.ToLower(name)
		if spellings[key] == nil {
			spellings[key] = map[string]bool{}
		}
		spellings[key][name] = true
		if old, ok := t.folded[key]; !ok || e.cat.restrictiveness() > old.cat.restrictiveness() {
			t.folded[key] = e
		}
	}
	t.info.Exact, t.info.Prefixes = len(t.exact), len(t.prefix)
	for _, sp := range spellings {
		if len(sp) > 1 {
			t.info.CaseCollisions++
		}
	}
	seen := map[int]bool{}
	for p := range t.prefix {
		if !seen[len(p)] {
			seen[len(p)] = true
			t.lengths = append(t.lengths, len(p))
		}
	}
	sortDesc(t.lengths)
	return t, nil
}

// put stores e under key, resolving a duplicate in favour of the more restrictive category (the
// first row wins a tie, so the result does not depend on map order).
func (t *dataTable) put(m map[string]dataEntry, key string, e dataEntry) {
	if old, dup := m[key]; !dup || e.cat.restrictiveness() > old.cat.restrictiveness() {
		m[key] = e
	}
}

// cleanName removes what cannot be part of a cookie name as a server sends it: surrounding
// white space (one name carries a tab) and invisible format characters (one carries a soft
// hyphen, U+00AD). It reports whether anything was removed.
func cleanName(s string) (string, bool) {
	out := strings.TrimSpace(s)
	out = strings.Map(func(r rune) rune {
		switch r {
		case '\u00ad', '\u200b', '\u200c', '\u200d', '\ufeff':
			return -1
		}
		return r
	}, out)
	return out, out != s
}
