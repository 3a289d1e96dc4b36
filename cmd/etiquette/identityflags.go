package main

// This file decides how the identity flags (shared by crawl, fetch and ua build) become an
// identity.Identity, and how the identity package's problems, which speak of Identity fields,
// are told in flags.

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/politecrawl/etiquette/politeness/identity"
)

// identityFlags are the flags that say who the crawler is.
type identityFlags struct {
	ua, profile, token, org, bot, version, infoURL, contact, userToken string
}

func (f *identityFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.ua, "ua", "", "`UA`: the whole User-Agent, instead of the parts (default $ETIQUETTE_UA)")
	fs.StringVar(&f.profile, "profile", "generic", "`PROFILE`: the User-Agent grammar, generic or fau")
	fs.StringVar(&f.token, "token", "", "`NAME`: the product token robots.txt addresses (generic profile), e.g. ExampleBot")
	fs.StringVar(&f.org, "org", "", "`ORG`: the organisation (fau profile), e.g. RRZE")
	fs.StringVar(&f.bot, "bot", "", "`BOT`: the bot's name (fau profile), e.g. Legalcheck")
	fs.StringVar(&f.version, "bot-version", "", "`V`: the crawler's version, e.g. 1.0")
	fs.StringVar(&f.infoURL, "info-url", "", "`URL`: a page that explains the crawler and how to reach its operator")
	fs.StringVar(&f.contact, "contact", "", "`EMAIL`: the operator's e-mail address (required for fau)")
	fs.StringVar(&f.userToken, "user-token", "", "`NAME`: the product token of user-triggered fetches (default <token>-User)")
}

// identityFlagNames are the flags register adds, which help lists apart.
var identityFlagNames = map[string]bool{"ua": true, "profile": true, "token": true, "org": true, "bot": true,
	"bot-version": true, "info-url": true, "contact": true, "user-token": true}

// errNoIdentityFlags is identity.ErrNoIdentity told in flags.
var errNoIdentityFlags = usagef("no crawler identity configured: give --ua UA (or set ETIQUETTE_UA); " +
	"or --token NAME --bot-version V --info-url URL [--contact EMAIL]; " +
	"or --profile fau --org ORG --bot BOT --bot-version V --info-url URL --contact EMAIL")

// identity builds and validates the identity; every failure is a usage error (exit 2) whose
// text lists each problem and how to fix it, in flags. Warnings go to warn.
func (f *identityFlags) identity(getenv func(string) string, warn func(string)) (identity.Identity, error) {
	profile, err := identity.ParseProfile(f.profile)
	if err != nil {
		return identity.Identity{}, usagef("--profile %q: use generic or fau", f.profile)
	}
	parts := f.token != "" || f.org != "" || f.bot != "" || f.version != "" || f.infoURL != "" || f.contact != ""
	ua := f.ua
	if ua == "" && f.token == "" && f.org == "" && f.bot == "" {
		ua = getenv("ETIQUETTE_UA")
	}
	fromUA := ua != ""
	var id identity.Identity
	var warnings []identity.Problem
	switch {
	case fromUA && parts:
		return id, usagef("give either --ua (or ETIQUETTE_UA) or the parts (--token/--org/--bot, --bot-version, --info-url, --contact), not both")
	case fromUA:
		id, warnings, err = identity.Parse(ua, profile)
	default:
		id = identity.Identity{Profile: profile, Token: f.token, Org: f.org, Bot: f.bot, Version: f.version, InfoURL: f.infoURL, Contact: f.contact}
		warnings, err = id.Validate()
	}
	if err == nil && f.userToken != "" {
		id.UserToken = f.userToken
		warnings, err = id.Validate()
	}
	var ve *identity.ValidationError
	switch {
	case errors.Is(err, identity.ErrNoIdentity):
		return id, errNoIdentityFlags
	case errors.As(err, &ve):
		return id, usagef("the crawler identity is not usable:\n%s", problemLines(ve.Problems, fromUA))
	case err != nil:
		return id, &usageError{err.Error()}
	}
	for _, w := range warnings {
		warn(fmt.Sprintf("warning: %s: %s (fix: %s)", where(w.Field, fromUA), inFlags.Replace(w.Message), inFlags.Replace(w.Fix)))
	}
	return id, nil
}

// fieldFlag names the flag that sets each identity field.
var fieldFlag = map[identity.Field]string{
	identity.FieldUserAgent: "--ua", identity.FieldVerbatim: "--ua", identity.FieldProfile: "--profile",
	identity.FieldToken: "--token", identity.FieldOrg: "--org", identity.FieldBot: "--bot",
	identity.FieldVersion: "--bot-version", identity.FieldInfoURL: "--info-url",
	identity.FieldContact: "--contact", identity.FieldUserToken: "--user-token",
}

// partName names each field as a part of a whole User-Agent string.
var partName = map[identity.Field]string{
	identity.FieldUserAgent: "User-Agent", identity.FieldVerbatim: "User-Agent", identity.FieldProfile: "profile",
	identity.FieldToken: "token", identity.FieldOrg: "org", identity.FieldBot: "bot",
	identity.FieldVersion: "version", identity.FieldInfoURL: "info URL",
	identity.FieldContact: "contact", identity.FieldUserToken: "user token",
}

// inFlags rewrites the identity package's Go terms in a message or fix as the flags that set
// them: "set Identity.Contact" becomes "set --contact", "identity.FAU" becomes "fau".
var inFlags = func() *strings.Replacer {
	pairs := []string{"identity.FAU", "fau", "identity.Generic", "generic"}
	for f, name := range fieldFlag {
		pairs = append(pairs, "Identity."+string(f), name)
	}
	return strings.NewReplacer(pairs...)
}()

// where names the place to fix a problem: the flag, or, for an identity read from a whole
// User-Agent (--ua, ETIQUETTE_UA), the part of that string.
func where(f identity.Field, fromUA bool) string {
	switch {
	case f == identity.FieldUserToken || f == identity.FieldProfile:
		return fieldFlag[f]
	case fromUA && (f == identity.FieldUserAgent || f == identity.FieldVerbatim):
		return "--ua"
	case fromUA:
		return "--ua (" + partName[f] + ")"
	case f == identity.FieldUserAgent:
		return "the User-Agent"
	}
	return fieldFlag[f]
}

func problemLines(ps []identity.Problem, fromUA bool) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s: %s (fix: %s)\n", where(p.Field, fromUA), inFlags.Replace(p.Message), inFlags.Replace(p.Fix))
	}
	return strings.TrimRight(b.String(), "\n")
}
