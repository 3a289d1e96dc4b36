// Command etiquette is the command line of the etiquette library: check and build crawler
// User-Agents, decide a URL against a robots.txt file, crawl politely, and fetch one page on a
// person's behalf.
//
// Exit codes, for every command:
//
//	0    success, and help asked for (-h, --help, help)
//	1    the command's negative answer (an invalid UA, a disallowed URL) or a runtime failure
//	2    the input is unusable: usage, an unreadable file, an invalid identity, an unsupported flag
//	3    fetch only: robots.txt blocks the user-triggered token
//	130  interrupted (SIGINT)
//
// 'etiquette -h' lists the commands; 'etiquette COMMAND -h' prints a command's usage line,
// arguments, flags and exit codes on stdout.
package main

// This file decides which command runs and how its outcome becomes an exit code and a message.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
)

const usageText = `usage: etiquette COMMAND [flags] [arguments]

commands:
  ua check [--profile generic|fau] UA      validate a User-Agent (exit 0 valid, 1 invalid)
  ua build IDENTITY-FLAGS                  print the canonical User-Agent
  robots [--user-triggered [--strict-robots --crawl-token T] | --compare-colly] ROBOTS_FILE PRODUCT_TOKEN URL
                                           decide URL against a robots.txt file, for the crawl or (--user-triggered)
                                           for a fetch a person asked for (exit 0 allowed, 1 disallowed)
  crawl IDENTITY-FLAGS [flags] URL...      crawl politely; one JSON line per URL on stdout
  fetch IDENTITY-FLAGS [flags] URL         fetch one page for a person (the user-triggered token)
  keys generate FILE | jwks FILE... | directory --directory-authority HOST FILE...
                                           create a signing key; print its JWK Set or key directory
  info-page IDENTITY-FLAGS [flags] --out DIR
                                           write the crawler's description page (and key directory)
  demo [--twice] [--report DIR]            crawl a demo site on loopback and print what the crawl did
  help [COMMAND]                           this text, or a command's help

identity flags (crawl, fetch, info-page, ua build):
  --ua UA  (or the ETIQUETTE_UA environment variable)
  --token NAME --bot-version V --info-url URL [--contact EMAIL]
  --profile fau --org ORG --bot BOT --bot-version V --info-url URL --contact EMAIL
  --user-token NAME   the user-triggered token (default <token>-User)

exit codes:
  0    success; help asked for
  1    a negative answer (an invalid UA, a disallowed URL) or a runtime failure
  2    unusable input: usage, an unreadable file, an invalid identity, an unsupported flag
  3    fetch: robots.txt blocks the user-triggered token
  130  interrupted (SIGINT)

Run 'etiquette COMMAND -h' or 'etiquette help COMMAND' for a command's arguments and flags.
`

// commands maps each command name to its implementation. A command returns its exit code, and
// an error to print: a *usageError exits 2 whatever the code, errHelpShown exits 0.
var commands = map[string]func(ctx context.Context, args []string, e env) (int, error){
	"ua":        uaGroup.run,
	"robots":    runRobots,
	"crawl":     runCrawl,
	"fetch":     runFetch,
	"keys":      keysGroup.run,
	"info-page": runInfoPage,
	"demo":      runDemo,
}

// groups are the commands made of subcommands; a message names the subcommand too
// ("etiquette ua check: …").
var groups = map[string]group{"ua": uaGroup, "keys": keysGroup}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

// run executes one command line and returns its exit code.
func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usageText)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && commands[args[1]] != nil {
			// 'etiquette help crawl' is 'etiquette crawl -h', 'etiquette help ua check' is
			// 'etiquette ua check -h'.
			return run(ctx, slices.Concat(args[1:], []string{"-h"}), e)
		}
		if len(args) > 1 {
			fmt.Fprintf(e.stderr, "etiquette: no command %q\n\n%s", args[1], usageText)
			return exitUsage
		}
		fmt.Fprint(e.stdout, usageText)
		return exitOK
	}
	cmd := commands[name]
	if cmd == nil {
		fmt.Fprintf(e.stderr, "etiquette: unknown command %q\n\n%s", name, usageText)
		return exitUsage
	}
	code, err := cmd(ctx, args[1:], e)
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	if err != nil {
		if g, ok := groups[name]; ok && len(args) > 1 {
			if _, ok := g.sub(args[1]); ok {
				name += " " + args[1]
			}
		}
		fmt.Fprintf(e.stderr, "etiquette %s: %s\n", name, terminalSafe(err.Error())) // errors quote servers
		var ue *usageError
		switch {
		case errors.As(err, &ue):
			return exitUsage
		case errors.Is(err, context.Canceled) && ctx.Err() != nil:
			return exitInterrupted
		case code != exitOK:
			return code
		default:
			return exitNo
		}
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return code
}
