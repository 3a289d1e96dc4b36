package main

// This file decides the info-page command: the crawler's description page (and key directory),
// written from the same flags a crawl runs with.

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/politeness/infopage"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

var infoPageDoc = commandDoc{
	name:  "info-page",
	usage: "IDENTITY-FLAGS [flags] --out DIR",
	about: `Writes DIR/index.html and DIR/index.md, the page the User-Agent's info URL should serve, from the
same identity and policy flags as crawl (rate, concurrency, cache, cookies, signing key), so the
page says what the crawler does. With --sign-key it also writes
DIR/.well-known/http-message-signatures-directory and prints the header fields to serve it with;
its signatures expire after a week: run info-page again before then.`,
	exits: `  0  written; the files on stdout
  1  a file could not be written, or the key directory could not be signed
  2  unusable input: usage, no --out, an invalid identity, rate, network or signing key`,
	identity: true,
}

func runInfoPage(_ context.Context, args []string, e env) (int, error) {
	var o policyFlags
	fs := newFlagSet(infoPageDoc)
	o.register(fs)
	purpose := fs.String("purpose", "", "`TEXT`: what the crawler does and why, in a sentence or two")
	unit := fs.String("unit", "", "`TEXT`: the organisational unit responsible (default for --profile fau: FAU and --org)")
	networks := fs.String("networks", "", "`CIDR,...`: the source networks the crawler sends from")
	out := fs.String("out", "", "`DIR`: the directory to write index.html, index.md (and the key directory) into")
	pos, err := parseFlags(fs, infoPageDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 0 {
		return exitUsage, infoPageDoc.argErrorf("want no arguments, only flags (got %q)", pos)
	}
	if *out == "" {
		return exitUsage, infoPageDoc.argErrorf("want --out DIR, the directory to write the page into")
	}
	// Validated exactly as crawl validates them; the page opens no cache, so --no-cache only
	// changes what it says.
	p, err := o.policy(e)
	if err != nil {
		return exitUsage, err
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
	// nil without --sign-key; the policy flags checked the signing settings.
	signer, err := p.Signer()
	if err != nil {
		return exitUsage, signingFlagError(err, p.Identity.InfoURL, o.signatureAgent)
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

// outFile is a file info-page writes, relative to --out.
type outFile struct {
	name string
	data []byte
}
