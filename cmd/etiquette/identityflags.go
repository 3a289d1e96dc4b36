package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/politecrawl/etiquette/politeness/identity"
)

// identityFlags are the flags that say who the crawler is, shared by crawl, fetch and ua build.
type identityFlags struct {
	ua, profile, token, org, bot, version, infoURL, contact, userToken string
}

func (f *identityFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.ua, "ua", "", "the whole User-Agent (default $ETIQUETTE_UA)")
	fs.StringVar(&f.profile, "profile", "generic", "User-Agent grammar: generic or fau")
	fs.StringVar(&f.token, "token", "", "product token (generic profile), e.g. ExampleBot")
	fs.StringVar(&f.org, "org", "", "organisation (fau profile), e.g. RRZE")
	fs.StringVar(&f.bot, "bot", "", "bot name (fau profile), e.g. Legalcheck")
	fs.StringVar(&f.version, "bot-version", "", "the crawler's version, e.g. 1.0")
	fs.StringVar(&f.infoURL, "info-url", "", "page that explains the crawler and how to reach its operator")
	fs.StringVar(&f.contact, "contact", "", "operator's e-mail address (required for fau)")
	fs.StringVar(&f.userToken, "user-token", "", "token for user-triggered fetches (default <token>-User)")
}

func parseProfile(s string) (identity.Profile, error) {
	switch strings.ToLower(s) {
	case "", "generic":
		return identity.Generic, nil
	case "fau":
		return identity.FAU, nil
	}
	return "", usagef("--profile %q: use generic or fau", s)
}

// identity builds and validates the identity; every failure is a usage error (exit 2) whose
// text lists each problem and how to fix it. Warnings go to warn.
func (f *identityFlags) identity(getenv func(string) string, warn func(string)) (identity.Identity, error) {
	profile, err := parseProfile(f.profile)
	if err != nil {
		return identity.Identity{}, err
	}
	ua := f.ua
	if ua == "" && f.token == "" && f.org == "" && f.bot == "" {
		ua = getenv("ETIQUETTE_UA")
	}
	var id identity.Identity
	var warnings []identity.Problem
	switch {
	case ua != "":
		if f.token != "" || f.org != "" || f.bot != "" || f.version != "" || f.infoURL != "" || f.contact != "" {
			return id, usagef("give either --ua (or ETIQUETTE_UA) or the parts (--token/--org/--bot, --bot-version, --info-url, --contact), not both")
		}
		id, warnings, err = identity.Parse(ua, profile)
	case f.token == "" && f.org == "" && f.bot == "" && f.version == "" && f.infoURL == "" && f.contact == "":
		return id, &usageError{identity.ErrNoIdentity.Error()}
	default:
		id = identity.Identity{Profile: profile, Token: f.token, Org: f.org, Bot: f.bot, Version: f.version, InfoURL: f.infoURL, Contact: f.contact}
		warnings, err = id.Validate()
	}
	if err != nil {
		var ve *identity.ValidationError
		if errors.As(err, &ve) {
			return id, usagef("the crawler identity is not usable:\n%s", problemLines(ve.Problems, ua != ""))
		}
		return id, &usageError{err.Error()}
	}
	if f.userToken != "" {
		id.UserToken = f.userToken
		if warnings, err = id.Validate(); err != nil {
			return id, usagef("--user-token %q: %s", f.userToken, err)
		}
	}
	for _, w := range warnings {
		warn(fmt.Sprintf("warning: %s: %s (%s)", flagFor(string(w.Field), ua != ""), w.Message, w.Fix))
	}
	return id, nil
}

// newFlagSet returns a flag set whose errors are returned, not printed and exited on.
func newFlagSet(name string, e env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parseFlags parses args, allowing flags after positional arguments (etiquette crawl URL --rate 1).
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &usageError{"help requested"}
			}
			return nil, &usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// identityFlagNames are the identity parts that have a flag of the same name.
var identityFlagNames = map[string]bool{"token": true, "org": true, "bot": true, "bot-version": true,
	"info-url": true, "contact": true, "user-token": true, "profile": true}

// flagFor names the flag that sets field; a problem found in a whole --ua string names --ua.
func flagFor(field string, fromUA bool) string {
	if field == "user-token" || field == "profile" || (!fromUA && identityFlagNames[field]) {
		return "--" + field
	}
	if fromUA {
		return "--ua (" + field + ")"
	}
	return field
}

func problemLines(ps []identity.Problem, fromUA bool) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s: %s (fix: %s)\n", flagFor(string(p.Field), fromUA), p.Message, p.Fix)
	}
	return strings.TrimRight(b.String(), "\n")
}
