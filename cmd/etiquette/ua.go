package main

import (
	"errors"
	"fmt"

	"github.com/politecrawl/etiquette/politeness/identity"
)

// runUA: "ua check [--profile P] UA" and "ua build IDENTITY-FLAGS".
func runUA(args []string, e env) (int, error) {
	if len(args) == 0 {
		return exitUsage, usagef("usage: etiquette ua check [--profile generic|fau] UA | etiquette ua build IDENTITY-FLAGS")
	}
	switch args[0] {
	case "check":
		fs := newFlagSet("ua check", e)
		profile := fs.String("profile", "", "User-Agent grammar: generic or fau (default: fau for a UA that starts with FAU-, else generic)")
		pos, err := parseFlags(fs, args[1:])
		if err != nil {
			return exitUsage, err
		}
		if len(pos) != 1 {
			return exitUsage, usagef("usage: etiquette ua check [--profile generic|fau] UA (quote the UA: it contains spaces)")
		}
		p := identity.Detect(pos[0])
		if *profile != "" {
			if p, err = parseProfile(*profile); err != nil {
				return exitUsage, err
			}
		}
		_, warnings, err := identity.Parse(pos[0], p)
		if err != nil {
			var ve *identity.ValidationError
			if !errors.As(err, &ve) {
				return exitUsage, err
			}
			for _, pr := range ve.Problems {
				fmt.Fprintf(e.stdout, "%s: %s (%s)\n", pr.Field, pr.Message, pr.Fix)
			}
			return exitNo, nil
		}
		for _, w := range warnings {
			fmt.Fprintf(e.stderr, "warning: %s: %s (%s)\n", w.Field, w.Message, w.Fix)
		}
		fmt.Fprintln(e.stdout, "valid")
		return exitOK, nil
	case "build":
		fs := newFlagSet("ua build", e)
		var idf identityFlags
		idf.register(fs)
		pos, err := parseFlags(fs, args[1:])
		if err != nil {
			return exitUsage, err
		}
		if len(pos) != 0 {
			return exitUsage, usagef("ua build takes no arguments, only identity flags (got %q)", pos)
		}
		id, err := idf.identity(e.getenv, func(s string) { fmt.Fprintln(e.stderr, s) })
		if err != nil {
			return exitUsage, err
		}
		fmt.Fprintln(e.stdout, id.UserAgent())
		return exitOK, nil
	}
	return exitUsage, usagef("unknown ua command %q: use check or build", args[0])
}
