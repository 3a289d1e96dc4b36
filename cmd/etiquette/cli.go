package main

// This file decides how every command reads its command line and answers: the environment, exit
// codes, usage errors, flag parsing and help.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/politecrawl/etiquette/politeness/robots"
)

// Exit codes (see the package documentation).
const (
	exitOK          = 0
	exitNo          = 1
	exitUsage       = 2
	exitRobots      = 3
	exitInterrupted = 130
)

// env is the command's view of its environment, so tests run commands in-process.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

// warn prints a warning line on stderr.
func (e env) warn(s string) { fmt.Fprintln(e.stderr, s) }

// usageError marks input the command cannot use; it maps to exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// errHelpShown reports that a command printed its help, as asked; it maps to exit code 0.
var errHelpShown = errors.New("help shown")

// commandDoc is what a command's help says besides its flags.
type commandDoc struct {
	name  string // as typed after "etiquette": "robots", "ua check"
	usage string // the usage line after "etiquette NAME": "[flags] ROBOTS_FILE PRODUCT_TOKEN URL"
	about string // what the command does
	args  string // one line per positional argument; "" when it takes none
	exits string // its exit codes, one per line

	identity bool // the command takes the identity flags, which help lists apart
}

// group is a command made of subcommands (ua check, ua build): its first argument names the
// subcommand, or asks for the group's help.
type group struct {
	doc  commandDoc
	subs []subcommand
}

// subcommand is one command of a group, run with the arguments after its name.
type subcommand struct {
	name string
	run  func(args []string, e env) (int, error)
}

// run runs the subcommand args[0] names.
func (g group) run(_ context.Context, args []string, e env) (int, error) {
	if len(args) == 0 {
		return exitUsage, g.doc.argErrorf("want a command: %s", g.names())
	}
	switch args[0] {
	case "-h", "-help", "--help":
		printHelp(e.stdout, g.doc, nil)
		return exitOK, errHelpShown
	}
	if sub, ok := g.sub(args[0]); ok {
		return sub.run(args[1:], e)
	}
	return exitUsage, g.doc.argErrorf("unknown %s command %q: use %s", g.doc.name, args[0], g.names())
}

// sub returns the subcommand called name.
func (g group) sub(name string) (subcommand, bool) {
	for _, s := range g.subs {
		if s.name == name {
			return s, true
		}
	}
	return subcommand{}, false
}

// names lists the subcommands as a sentence: "check or build".
func (g group) names() string {
	var b strings.Builder
	for i, s := range g.subs {
		switch {
		case i == 0:
		case i == len(g.subs)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(s.name)
	}
	return b.String()
}

// usageLine is "usage: etiquette NAME USAGE".
func (d commandDoc) usageLine() string {
	return strings.TrimSpace("usage: etiquette " + d.name + " " + d.usage)
}

// argErrorf is a usage error about the command's arguments: the problem, then the usage line
// and where to find help.
func (d commandDoc) argErrorf(format string, args ...any) error {
	return usagef("%s\n%s\nrun 'etiquette %s -h' for help", fmt.Sprintf(format, args...), d.usageLine(), d.name)
}

// newFlagSet returns a flag set for the command that prints nothing itself: parseFlags reports
// its errors and prints the help.
func newFlagSet(d commandDoc) *flag.FlagSet {
	fs := flag.NewFlagSet(d.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments (etiquette crawl URL --rate 1).
// -h, -help and --help print the command's help on stdout and return errHelpShown.
func parseFlags(fs *flag.FlagSet, d commandDoc, args []string, e env) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printHelp(e.stdout, d, fs)
				return nil, errHelpShown
			}
			return nil, d.argErrorf("%s", flagsAsTyped.Replace(err.Error()))
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

// flagsAsTyped rewrites the flag package's "-name" in its error messages as "--name", the way
// this command's help and messages spell flags.
var flagsAsTyped = strings.NewReplacer("flag -", "flag --", "defined: -", "defined: --", "argument: -", "argument: --")

// printHelp writes the command's complete help: usage line, what it does, its arguments, its
// flags (identity flags apart), and its exit codes.
func printHelp(w io.Writer, d commandDoc, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n%s\n", d.usageLine(), d.about)
	if d.args != "" {
		fmt.Fprintf(w, "\narguments:\n%s\n", d.args)
	}
	var own, ident strings.Builder
	if fs != nil {
		fs.VisitAll(func(f *flag.Flag) {
			b := &own
			if d.identity && identityFlagNames[f.Name] {
				b = &ident
			}
			writeFlag(b, f)
		})
	}
	if ident.Len() > 0 {
		fmt.Fprintf(w, "\nidentity flags (give --ua, or the parts):\n%s", ident.String())
	}
	if own.Len() > 0 {
		fmt.Fprintf(w, "\nflags:\n%s", own.String())
	}
	fmt.Fprintf(w, "\nexit codes:\n%s\n", d.exits)
}

// writeFlag writes one flag as "  --name VALUE" ("  -v" for a one-letter flag) and its
// description below, with its default.
func writeFlag(b *strings.Builder, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	// A usage written "`NAME`: text" shows NAME after the flag and the text below it.
	usage = strings.TrimPrefix(usage, name+": ")
	dash := "--"
	if len(f.Name) == 1 {
		dash = "-"
	}
	fmt.Fprintf(b, "  %s%s", dash, f.Name)
	if name != "" {
		fmt.Fprintf(b, " %s", name)
	}
	fmt.Fprintf(b, "\n        %s", usage)
	switch f.DefValue {
	case "", "0", "0s", "false", "map[]":
	default:
		fmt.Fprintf(b, " (default %s)", f.DefValue)
	}
	b.WriteString("\n")
}

// withoutRequest returns the error the door gave for a request, without the 'Get "URL": ' that
// net/http's client puts in front: the library's text is what the operator reads.
func withoutRequest(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// blockedByRule reports whether err is a refusal by a rule of the site's robots.txt — not a
// robots.txt that could not be read, which refuses without a rule (Decision.Line 0).
func blockedByRule(err error) (*robots.DisallowedError, bool) {
	var dis *robots.DisallowedError
	if errors.As(err, &dis) && dis.Decision.Line > 0 {
		return dis, true
	}
	return nil, false
}

// httpURL parses s as an absolute http(s) URL with a host; anything else is unusable input,
// reported as what (e.g. "start URL").
func httpURL(what, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("%s %q: want an absolute http(s) URL, such as https://example.org/page", what, s)
	}
	return u, nil
}
