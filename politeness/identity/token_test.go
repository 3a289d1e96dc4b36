package identity

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestValidateToken: a token passes when `ua build` could produce it under either profile, as the
// crawl token or as a user token; anything else fails with the problems of the profile it looks
// like.
func TestValidateToken(t *testing.T) {
	cases := []struct {
		token string
		errs  []string // sorted fields; nil: valid
	}{
		{"ExampleBot", nil},
		{"ExampleBot-User", nil},
		{"Example_Bot", nil},
		{"FAU-RRZE-Legalcheck", nil},
		{"FAU-RRZE-Legalcheck-User", nil},
		{"FAU-INF12-Linkcheck", nil}, // digits: a FAU warning, not an error
		{"", []string{"Token"}},
		{"ExampleBot/1.0", []string{"Token"}},
		{"Example Bot", []string{"Token"}},
		{"Example2Bot", []string{"Token"}},
		{"*", []string{"Token", "Token"}}, // not a token, and no name
		{"curl", []string{"Token"}},
		{"Googlebot", []string{"Token"}},
		{"Mozilla", []string{"Token"}},
		{"Crawler", []string{"Token"}},
		{"FAU-Bot2", []string{"Token"}},
		{"FAU-RRZE-curl2", []string{"Bot"}},
		{"FAU-RR.ZE-Legalcheck2", []string{"Org"}},
		{strings.Repeat("Example", 40), []string{"Token"}}, // 280 bytes
	}
	for _, tc := range cases {
		err := ValidateToken(tc.token)
		errs := problemsOf(t, err)
		checkExplained(t, errs)
		if got := fields(errs); !slices.Equal(got, tc.errs) {
			t.Errorf("ValidateToken(%q) errors on %v, want %v\n%v", tc.token, got, tc.errs, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateToken(%q) = %v, not ErrInvalid", tc.token, err)
		}
	}
}

// TestUserAgentLength: no User-Agent over MaxUserAgentLen bytes is accepted, built or parsed, nor
// one whose user-triggered form would be longer; a huge string is refused as too long, not
// parsed.
func TestUserAgentLength(t *testing.T) {
	const head = "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org; "
	padded := func(n int) string { return head + strings.Repeat("x", n-len(head)-1) + ")" }
	userExtra := len("-User")
	cases := []struct {
		name string
		ua   string
		ok   bool
	}{
		{"user-triggered form exactly at the limit", padded(MaxUserAgentLen - userExtra), true},
		{"user-triggered form one byte over", padded(MaxUserAgentLen - userExtra + 1), false},
		{"one byte over", padded(MaxUserAgentLen + 1), false},
		{"100 KB", padded(100 << 10), false},
		{"100 KB of blanks around a valid UA", strings.Repeat(" ", 50<<10) + head + ")" + strings.Repeat(" ", 50<<10), true},
	}
	for _, tc := range cases {
		_, _, err := Parse(tc.ua, Generic)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Parse = %v, want ok=%v", tc.name, err, tc.ok)
			continue
		}
		if !tc.ok {
			ps := problemsOf(t, err)
			if got := fields(ps); !slices.Equal(got, []string{"UserAgent"}) || !strings.Contains(ps[0].Message, "512") {
				t.Errorf("%s: problems %v; want one on UserAgent naming the limit", tc.name, ps)
			}
		}
	}
	long := with(exampleBot, func(i *Identity) { i.InfoURL = "https://example.org/" + strings.Repeat("a", MaxUserAgentLen) })
	_, err := long.Validate()
	if got := fields(problemsOf(t, err)); !slices.Equal(got, []string{"UserAgent"}) {
		t.Errorf("a built identity with a %d-byte User-Agent: problems on %v, want [UserAgent]", len(long.UserAgent()), got)
	}
}

// TestProblemsSpeakGo: the library's advice names Identity fields, never a command-line flag or
// environment variable; translating to flags is the command line's job.
func TestProblemsSpeakGo(t *testing.T) {
	flagLike := regexp.MustCompile(`--[a-z]|ETIQUETTE_`)
	var all []Problem
	collect := func(w []Problem, err error) {
		all = append(all, w...)
		var ve *ValidationError
		if errors.As(err, &ve) {
			all = append(all, ve.Problems...)
		}
	}
	for _, id := range []Identity{
		{Profile: FAU, Version: "1.0"},
		{Profile: FAU, Token: "Legalcheck"},
		{Token: "python requests", Version: "1 0", InfoURL: "example.org/bot", Contact: "Bot <bot@example.org>"},
		with(exampleBot, func(i *Identity) { i.Org, i.Contact = "RRZE", "" }),
		with(exampleBot, func(i *Identity) { i.Profile = "rrze" }),
		with(exampleBot, func(i *Identity) { i.UserToken = "examplebot" }),
		with(exampleBot, func(i *Identity) { i.Verbatim = "OtherBot/1.0 (+https://example.org/bot)" }),
		with(legalcheck, func(i *Identity) { i.Org, i.Bot, i.UserToken, i.Contact = "RR-ZE", "FAU-X", "Other", "" }),
		with(legalcheck, func(i *Identity) { i.Org, i.Bot, i.Version = "", "", "" }),
		{Token: "", Version: "", InfoURL: "", Contact: "mailto:x"},
	} {
		collect(id.Validate())
	}
	for _, ua := range []string{"Mozilla/5.0", "FAU-Bot", "curl/8.0", "ExampleBot (x", "(+https://example.org) Bot/1"} {
		_, w, err := Parse(ua, Generic)
		collect(w, err)
		_, w, err = Parse(ua, FAU)
		collect(w, err)
	}
	if len(all) < 20 {
		t.Fatalf("only %d problems collected", len(all))
	}
	for _, p := range all {
		if flagLike.MatchString(p.Message) || flagLike.MatchString(p.Fix) {
			t.Errorf("problem speaks of flags: %s", p)
		}
	}
	if flagLike.MatchString(ErrNoIdentity.Error()) {
		t.Errorf("ErrNoIdentity speaks of flags: %v", ErrNoIdentity)
	}
}
