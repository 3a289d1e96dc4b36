package dropin_test

import "testing"

// The matrix's judgement on made-up runs: a difference is silent unless the polite run showed a
// message the bare one did not — one about the program's setting, when the program names it.
func TestVerdictCallsADifferenceSilentUnlessANewMessageExplainsIt(t *testing.T) {
	visits := []string{"GET {site}/ 200"}
	cookie := &outcome{lines: []string{`site saw cookie "a=1"`}, visits: visits, messages: []string{"level=WARN msg=old"}}
	noCookie := func(messages ...string) *outcome {
		return &outcome{lines: []string{`site saw cookie ""`}, visits: visits, messages: messages}
	}
	for _, c := range []struct {
		name         string
		about        string
		bare, polite *outcome
		identical    bool
		silent       bool
	}{
		{"same output, same visits", "", cookie, &outcome{lines: cookie.lines, visits: visits, messages: []string{"level=WARN msg=new"}}, true, false},
		{"the same lines in another order", "", &outcome{lines: []string{"x", "y"}}, &outcome{lines: []string{"y", "x"}}, false, true},
		{"a different output and no message", "", cookie, noCookie(), false, true},
		{"a different output and only the bare run's message", "", cookie, noCookie("level=WARN msg=old"), false, true},
		{"a different output and a new message", "", cookie, noCookie("level=WARN msg=new"), false, false},
		{"a new message about something else", `(?i)cookie`, cookie, noCookie(`level=WARN msg="responses are slow"`), false, true},
		{"a new message about the setting", `(?i)cookie`, cookie, noCookie(`level=WARN msg="Cookie header dropped"`), false, false},
		{"one more visit and no message", "", cookie, &outcome{lines: cookie.lines, visits: append([]string{"GET {site}/a 200"}, visits...)}, false, true},
	} {
		v := row{prog: program{name: "made-up", about: c.about}, bare: c.bare, polite: c.polite}.verdict()
		if v.identical != c.identical || v.silent != c.silent {
			t.Errorf("%s: identical=%v silent=%v, want identical=%v silent=%v (%s)", c.name, v.identical, v.silent, c.identical, c.silent, v.polite)
		}
	}
}
