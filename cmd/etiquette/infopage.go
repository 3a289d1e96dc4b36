package main

// This file is the info-page command: write the crawler's description page (and key directory)
// from the same flags a crawl runs with.

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/infopage"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

const infoPageUsage = `usage: etiquette info-page IDENTITY-FLAGS [--rate R] [--authorized-rate HOST[:PORT]=R]...
           [--concurrency N] [--cookies-for CLASS,...] [--allow-cookie NAME]... [--no-cache]
           [--purpose TEXT] [--unit TEXT] [--networks CIDR,...]
           [--sign-key FILE [--signature-agent URL]] --out DIR

Writes DIR/index.html and DIR/index.md, the page the User-Agent's info URL should serve, from the
same identity and politeness flags as crawl, so the page says what the crawler does. With
--sign-key it also writes DIR/.well-known/http-message-signatures-directory and prints the
header fields to serve it with.
`

func runInfoPage(args []string, e env) (int, error) {
	o := crawlOptions{authorized: authorizedRates{}}
	fs := newFlagSet("info-page", e)
	o.idf.register(fs)
	fs.Float64Var(&o.rate, "rate", politeness.DefaultRate, "request starts per second per host, as given to crawl")
	fs.Var(o.authorized, "authorized-rate", "HOST[:PORT]=R, as given to crawl (repeatable)")
	fs.IntVar(&o.concurrency, "concurrency", politeness.DefaultConcurrency, "requests in flight per host, as given to crawl")
	fs.StringVar(&o.cookiesFor, "cookies-for", "", "cookie classes the task needs, as given to crawl")
	fs.Var(&o.allowCookie, "allow-cookie", "a cookie name the task needs, as given to crawl (repeatable)")
	noCache := fs.Bool("no-cache", false, "the crawl runs with --no-cache")
	purpose := fs.String("purpose", "", "what the crawler does and why, in a sentence or two")
	unit := fs.String("unit", "", "the organisational unit responsible (default for --profile fau: FAU and --org)")
	networks := fs.String("networks", "", "comma-separated source networks (CIDR) the crawler sends from")
	signKey := fs.String("sign-key", "", "the Ed25519 signing key (PKCS#8 PEM) the crawl signs with")
	agent := fs.String("signature-agent", "", "the https URL of the key directory (default: the info URL's origin + "+webbotauth.WellKnownPath+")")
	out := fs.String("out", "", "directory to write index.html, index.md (and the key directory) into")
	if helpRequested(args) {
		fmt.Fprint(e.stdout, infoPageUsage+"\nflags:\n")
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		return exitOK, nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 0 || *out == "" {
		return exitUsage, usagef("%s", infoPageUsage)
	}

	// Validated exactly as crawl validates them. The page opens no cache, so the policy is built
	// without one and --no-cache only changes what the page says.
	o.noCache = true
	p, err := o.policy(e)
	if err != nil {
		return exitUsage, err
	}
	p.NoCache = *noCache
	p.Rate = min(o.rate, politeness.DefaultRate) // faster only for the hosts in AuthorizedRates
	p.Concurrency = o.concurrency
	if len(o.authorized) > 0 {
		p.AuthorizedRates = o.authorized
	}
	opts := infopage.Options{Purpose: *purpose, Unit: *unit}
	for _, n := range strings.Split(*networks, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(n)
		if err != nil {
			return exitUsage, usagef("--networks: %q is not a CIDR network such as 192.0.2.0/24 or 2001:db8::/32", n)
		}
		opts.Networks = append(opts.Networks, prefix.Masked())
	}
	var signer *webbotauth.Signer
	if *signKey != "" {
		if p.SignKey, err = webbotauth.LoadKey(*signKey); err != nil {
			return exitUsage, usagef("--sign-key: %v", err)
		}
		p.SignatureAgent = *agent
		if signer, err = p.Signer(); err != nil {
			return exitUsage, signingFlagError(err, p.Identity.InfoURL, *agent)
		}
	} else if *agent != "" {
		return exitUsage, usagef("--signature-agent needs --sign-key")
	}
	page, err := infopage.New(p, opts)
	if err != nil {
		return exitUsage, err
	}

	files := []outFile{{"index.html", page.HTML()}, {"index.md", page.Markdown()}}
	directoryFile := strings.TrimPrefix(webbotauth.WellKnownPath, "/")
	var directoryHeaders http.Header
	now := time.Now()
	if signer != nil {
		dir, err := webbotauth.NewDirectory([]ed25519.PrivateKey{p.SignKey}, webbotauth.DirectoryOptions{})
		if err != nil {
			return exitNo, err
		}
		agentURL, _ := url.Parse(signer.Agent()) // NewSigner checked it
		body, h, err := dir.Response(agentURL.Host, now)
		if err != nil {
			return exitNo, err
		}
		files = append(files, outFile{directoryFile, body})
		directoryHeaders = h
	}
	for _, f := range files {
		path := filepath.Join(*out, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return exitNo, err
		}
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			return exitNo, err
		}
		fmt.Fprintln(e.stdout, "wrote", path)
	}
	if signer != nil {
		fmt.Fprintf(e.stdout, "\nServe %s at %s byte for byte (no compression) with these header fields;\nits signatures expire at %s: run info-page again before then.\n",
			filepath.Join(*out, filepath.FromSlash(directoryFile)), signer.Agent(), now.Add(webbotauth.DefaultProofValidity).UTC().Format(time.RFC3339))
		writeDirectoryHeaders(e.stdout, directoryHeaders)
	}
	return exitOK, nil
}

// signingFlagError says in flag terms why signing cannot start.
func signingFlagError(err error, infoURL, agent string) error {
	switch {
	case !errors.Is(err, webbotauth.ErrAgentNotHTTPS):
		return usagef("--sign-key: %v", err)
	case agent != "":
		return usagef("--signature-agent %q: the key directory must be an https URL", agent)
	}
	return usagef("--sign-key: the key directory must be served over https, but --info-url %q is not https; serve the info page over https or give --signature-agent https://HOST%s", infoURL, webbotauth.WellKnownPath)
}

// outFile is a file info-page writes, relative to --out.
type outFile struct {
	name string
	data []byte
}
