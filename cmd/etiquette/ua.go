package main

// This file decides the ua commands: whether a User-Agent is valid (ua check) and what the
// canonical one of an identity is (ua build).

import (
	"errors"
	"fmt"

	"github.com/politecrawl/etiquette/politeness/identity"
)

var uaDoc = commandDoc{
	name:  "ua",
	usage: "check [--profile generic|fau] UA | etiquette ua build IDENTITY-FLAGS",
	about: `Checks a crawler's User-Agent against the identity rules (ua check), or builds the canonical
User-Agent from its parts (ua build). Run 'etiquette ua check -h' or 'etiquette ua build -h' for
their arguments and flags.`,
	exits: `  0  ua check: valid; ua build: printed
  1  ua check: invalid, one problem per line on stdout
  2  unusable input: usage; ua build: no identity or an invalid one`,
}

var uaCheckDoc = commandDoc{
	name:  "ua check",
	usage: "[--profile generic|fau] UA",
	about: `Checks UA against the rules for a crawler's User-Agent: it must name the crawler, link to a page
about it, not pass for a browser, a library or someone else's crawler, and be at most 512 bytes.
Prints "valid", or one problem per line on stdout, each with its fix. Warnings go to stderr.`,
	args: `  UA   the whole User-Agent, quoted (it contains spaces)`,
	exits: `  0  valid (warnings, if any, on stderr)
  1  invalid: one problem per line on stdout
  2  unusable input: usage`,
}

var uaBuildDoc = commandDoc{
	name:  "ua build",
	usage: "IDENTITY-FLAGS",
	about: `Builds the canonical User-Agent from the identity flags (or reads --ua, or $ETIQUETTE_UA),
validates it and prints it. Warnings go to stderr.`,
	exits: `  0  printed
  2  unusable input: usage, no identity, or an invalid one (one problem per line on stderr, each
     naming the flag to change)`,
	identity: true,
}

// uaGroup is "ua check [--profile P] UA" and "ua build IDENTITY-FLAGS".
var uaGroup = group{doc: uaDoc, subs: []subcommand{{"check", uaCheck}, {"build", uaBuild}}}

func uaCheck(args []string, e env) (int, error) {
	fs := newFlagSet(uaCheckDoc)
	profile := fs.String("profile", "", "`PROFILE`: the User-Agent grammar, generic or fau (default: fau for a UA that starts with FAU-, else generic)")
	pos, err := parseFlags(fs, uaCheckDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 1 {
		return exitUsage, uaCheckDoc.argErrorf("want one argument, the User-Agent (quote it: it contains spaces), got %d", len(pos))
	}
	p := identity.Detect(pos[0])
	if *profile != "" {
		if p, err = identity.ParseProfile(*profile); err != nil {
			return exitUsage, usagef("--profile %q: use generic or fau", *profile)
		}
	}
	_, warnings, err := identity.Parse(pos[0], p)
	var ve *identity.ValidationError
	switch {
	case errors.Is(err, identity.ErrNoIdentity):
		fmt.Fprintln(e.stdout, "User-Agent: the User-Agent is empty: a crawler must say which crawler it is and who runs it "+
			"(fix: give the crawler's User-Agent, e.g. ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org))")
		return exitNo, nil
	case errors.As(err, &ve):
		for _, pr := range ve.Problems {
			fmt.Fprintf(e.stdout, "%s: %s (fix: %s)\n", partName[pr.Field], inFlags.Replace(pr.Message), inFlags.Replace(pr.Fix))
		}
		return exitNo, nil
	case err != nil:
		return exitUsage, err
	}
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "warning: %s: %s (fix: %s)\n", partName[w.Field], inFlags.Replace(w.Message), inFlags.Replace(w.Fix))
	}
	fmt.Fprintln(e.stdout, "valid")
	return exitOK, nil
}

func uaBuild(args []string, e env) (int, error) {
	fs := newFlagSet(uaBuildDoc)
	var idf identityFlags
	idf.register(fs)
	pos, err := parseFlags(fs, uaBuildDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 0 {
		return exitUsage, uaBuildDoc.argErrorf("want no arguments, only identity flags (got %q)", pos)
	}
	id, err := idf.identity(e.getenv, e.warn)
	if err != nil {
		return exitUsage, err
	}
	fmt.Fprintln(e.stdout, id.UserAgent())
	return exitOK, nil
}
