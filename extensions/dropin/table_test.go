package dropin_test

// This file decides what a row of the matrix says: whether the two runs differ, whether the
// polite run told its user, and how the row reads in Markdown.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// verdict is a row's comparison.
type verdict struct {
	identical bool
	silent    bool
	bare      string // the bare result, short
	polite    string // "identical", or what the polite run did instead
	seen      string // messages the polite run showed and the bare one did not
	detail    string // the full difference, for a failure
}

func (r row) verdict() verdict {
	v := verdict{bare: summary(r.bare)}
	lostL, gainL := diff(r.bare.lines, r.polite.lines)
	lostV, gainV := diff(r.bare.visits, r.polite.visits)
	newMsgs, _ := diff(r.polite.messages, r.bare.messages)
	explaining := newMsgs
	if r.prog.about != "" {
		re := regexp.MustCompile(r.prog.about)
		explaining = slices.DeleteFunc(slices.Clone(newMsgs), func(m string) bool { return !re.MatchString(m) })
		// The explaining messages first: they are the ones the table should show.
		newMsgs = append(slices.Clone(explaining), slices.DeleteFunc(newMsgs, re.MatchString)...)
	}
	v.seen = shorten(strings.Join(newMsgs, " · "), 240)
	if v.seen == "" {
		v.seen = "—"
	}
	reordered := len(lostL)+len(gainL) == 0 && !slices.Equal(r.bare.lines, r.polite.lines)
	if len(lostL)+len(gainL)+len(lostV)+len(gainV) == 0 && !reordered {
		v.identical = true
		v.polite = "identical"
		return v
	}
	v.silent = len(explaining) == 0
	var parts []string
	add := func(label string, items []string) {
		if len(items) > 0 {
			parts = append(parts, label+" "+quoteSome(items, 2))
		}
	}
	if reordered {
		parts = append(parts, "printed the same lines in another order")
	}
	add("printed not", lostL)
	add("printed", gainL)
	add("site did not get", lostV)
	add("site got", gainV)
	v.polite = "different: " + strings.Join(parts, "; ")
	v.detail = fmt.Sprintf("  bare printed:   %q\n  polite printed: %q\n  bare visits:    %q\n  polite visits:  %q\n  polite messages (none matching %q): %q",
		r.bare.lines, r.polite.lines, r.bare.visits, r.polite.visits, r.prog.about, r.polite.messages)
	return v
}

func (v verdict) markdown(p program) string {
	name := p.name
	if p.example {
		name = "`_examples/" + name + "`"
	}
	polite := v.polite
	switch {
	case v.silent && knownSilent[p.name] != "":
		polite = "**silent** (" + knownSilent[p.name] + "): " + polite
	case v.silent:
		polite = "**silent**: " + polite
	}
	return fmt.Sprintf("| %s | %s | %s | %s |\n", name, cell(v.bare), cell(polite), cell(v.seen))
}

// summary is a bare run in a few words: how much it printed and fetched.
func summary(o *outcome) string {
	s := fmt.Sprintf("%d lines printed; %d requests", len(o.lines), len(o.visits))
	if len(o.lines) > 0 {
		s += ", e.g. " + quoteSome(o.lines, 1)
	}
	return s
}

// diff returns the items of a missing from b and those of b missing from a, as multisets.
func diff(a, b []string) (onlyA, onlyB []string) {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		if count[s] > 0 {
			count[s]--
			continue
		}
		onlyB = append(onlyB, s)
	}
	for _, s := range a {
		if count[s] > 0 {
			count[s]--
			onlyA = append(onlyA, s)
		}
	}
	return onlyA, onlyB
}

func quoteSome(items []string, n int) string {
	var q []string
	for i, s := range items {
		if i == n {
			q = append(q, fmt.Sprintf("(+%d more)", len(items)-n))
			break
		}
		q = append(q, "`"+shorten(s, 90)+"`")
	}
	return strings.Join(q, ", ")
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
