// Command etiquette is the command line of the etiquette library: check and build crawler
// User-Agents, decide a URL against a robots.txt file, crawl politely, and fetch one page on a
// person's behalf.
//
// Exit codes, for every command:
//
//	0    success
//	1    the command's negative answer (an invalid UA, a disallowed URL) or a runtime failure
//	2    the input is unusable: usage, an unreadable file, an invalid identity, an unsupported flag
//	3    fetch only: robots.txt blocks the user-triggered token
//	130  interrupted (SIGINT)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
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

// usageError marks input the command cannot use; it maps to exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// errNotYet is the answer for a flag or command whose capability a later release brings.
func errNotYet(what string) error {
	return usagef("%s: not supported yet", what)
}

const usageText = `usage: etiquette COMMAND [flags] [args]

commands:
  ua check [--profile generic|fau] UA     validate a User-Agent (exit 0 valid, 1 invalid)
  ua build IDENTITY-FLAGS                  print the canonical User-Agent
  robots [--compare-colly] ROBOTS_FILE PRODUCT_TOKEN URL
                                           decide URL against a robots.txt file (exit 0 allowed, 1 disallowed)
  crawl IDENTITY-FLAGS [flags] URL...      crawl politely; one JSON line per URL on stdout
  fetch IDENTITY-FLAGS [flags] URL         fetch one page for a person (user-triggered)
  demo                                     a guided demonstration

identity flags (crawl, fetch, ua build):
  --ua STRING  (or ETIQUETTE_UA)
  --token NAME --bot-version V --info-url URL [--contact EMAIL]
  --profile fau --org ORG --bot BOT --bot-version V --info-url URL --contact EMAIL
  --user-token NAME   the user-triggered token (default <token>-User)

Run 'etiquette COMMAND -h' for a command's flags.
`

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
	var err error
	code := exitOK
	switch args[0] {
	case "ua":
		code, err = runUA(args[1:], e)
	case "robots":
		code, err = runRobots(args[1:], e)
	case "crawl":
		code, err = runCrawl(ctx, args[1:], e)
	case "fetch":
		code, err = runFetch(ctx, args[1:], e)
	case "keys":
		code, err = runKeys(args[1:], e)
	case "info-page":
		code, err = runInfoPage(args[1:], e)
	case "demo":
		err = errNotYet("etiquette demo")
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, usageText)
		return exitOK
	default:
		err = usagef("unknown command %q\n\n%s", args[0], usageText)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "etiquette:", err)
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
