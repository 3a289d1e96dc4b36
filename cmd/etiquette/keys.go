package main

// This file is the keys command: create a signing key, and print what to publish for it.

import (
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

const keysUsage = `usage:
  etiquette keys generate FILE
      write a new Ed25519 signing key to FILE (PKCS#8 PEM, mode 0600; never overwrites)
      and print its thumbprint, the keyid of its signatures
  etiquette keys jwks FILE...
      print the public JWK Set of the keys (kid = thumbprint; no private part)
  etiquette keys directory --directory-authority HOST [--validity D] [--max-age D] FILE...
      print the key directory for static hosting at
      https://HOST/.well-known/http-message-signatures-directory: its response header fields,
      a blank line, then the body to serve byte for byte
`

// helpRequested reports whether args ask for help; a command answers it on stdout with exit 0.
func helpRequested(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" })
}

// runKeys: "keys generate FILE", "keys jwks FILE...", "keys directory --directory-authority HOST FILE...".
func runKeys(args []string, e env) (int, error) {
	if len(args) == 0 {
		return exitUsage, usagef("%s", keysUsage)
	}
	if helpRequested(args[:1]) || args[0] == "help" {
		fmt.Fprint(e.stdout, keysUsage)
		return exitOK, nil
	}
	switch args[0] {
	case "generate":
		return runKeysGenerate(args[1:], e)
	case "jwks":
		return runKeysJWKS(args[1:], e)
	case "directory":
		return runKeysDirectory(args[1:], e)
	}
	return exitUsage, usagef("unknown keys command %q\n\n%s", args[0], keysUsage)
}

func runKeysGenerate(args []string, e env) (int, error) {
	fs := newFlagSet("keys generate", e)
	if helpRequested(args) {
		fmt.Fprint(e.stdout, keysUsage)
		return exitOK, nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 1 {
		return exitUsage, usagef("usage: etiquette keys generate FILE")
	}
	key, err := webbotauth.GenerateKey()
	if err != nil {
		return exitNo, err
	}
	if err := webbotauth.WriteKey(pos[0], key); err != nil {
		return exitUsage, err
	}
	fmt.Fprintln(e.stdout, webbotauth.Thumbprint(key.Public().(ed25519.PublicKey)))
	fmt.Fprintf(e.stderr, "etiquette: wrote %s (mode 0600); publish its public half with 'etiquette keys directory' or 'etiquette info-page --sign-key %s'\n", pos[0], pos[0])
	return exitOK, nil
}

func runKeysJWKS(args []string, e env) (int, error) {
	if helpRequested(args) {
		fmt.Fprint(e.stdout, keysUsage)
		return exitOK, nil
	}
	keys, err := loadKeys(newFlagSet("keys jwks", e), args, "usage: etiquette keys jwks FILE...")
	if err != nil {
		return exitUsage, err
	}
	pubs := make([]ed25519.PublicKey, len(keys))
	for i, k := range keys {
		pubs[i] = k.Public().(ed25519.PublicKey)
	}
	out, err := json.MarshalIndent(webbotauth.PublicJWKS(pubs...), "", "  ")
	if err != nil {
		return exitNo, err
	}
	fmt.Fprintf(e.stdout, "%s\n", out)
	return exitOK, nil
}

func runKeysDirectory(args []string, e env) (int, error) {
	fs := newFlagSet("keys directory", e)
	authority := fs.String("directory-authority", "", "the host (and port, if not 443) that serves the directory, e.g. example.org")
	validity := fs.Duration("validity", webbotauth.DefaultProofValidity, "how long the directory's signatures stay valid; regenerate before then")
	maxAge := fs.Duration("max-age", webbotauth.DefaultDirectoryMaxAge, "how long verifiers may cache the directory")
	if helpRequested(args) {
		fmt.Fprint(e.stdout, keysUsage)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		return exitOK, nil
	}
	keys, err := loadKeys(fs, args, "usage: etiquette keys directory --directory-authority HOST FILE...")
	if err != nil {
		return exitUsage, err
	}
	if *authority == "" || strings.ContainsAny(*authority, "/ ") {
		return exitUsage, usagef("--directory-authority %q: give the host that serves the directory, e.g. example.org (the signatures are bound to it)", *authority)
	}
	if *validity <= 0 || *maxAge <= 0 {
		return exitUsage, usagef("--validity and --max-age must be positive durations such as 168h")
	}
	dir, err := webbotauth.NewDirectory(keys, webbotauth.DirectoryOptions{ProofValidity: *validity, MaxAge: *maxAge})
	if err != nil {
		return exitUsage, err
	}
	now := time.Now()
	body, h, err := dir.Response(*authority, now)
	if err != nil {
		return exitNo, err
	}
	writeDirectoryHeaders(e.stdout, h)
	fmt.Fprintln(e.stdout)
	_, _ = e.stdout.Write(body)
	fmt.Fprintf(e.stderr, "etiquette: serve the body at https://%s%s byte for byte (no compression, no trailing newline) with these header fields; its signatures expire at %s: regenerate before then\n",
		*authority, webbotauth.WellKnownPath, now.Add(*validity).UTC().Format(time.RFC3339))
	return exitOK, nil
}

// loadKeys parses fs and loads every key file named by the positional arguments.
func loadKeys(fs *flag.FlagSet, args []string, usage string) ([]ed25519.PrivateKey, error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 {
		return nil, usagef("%s", usage)
	}
	keys := make([]ed25519.PrivateKey, 0, len(pos))
	for _, p := range pos {
		k, err := webbotauth.LoadKey(p)
		if err != nil {
			return nil, &usageError{err.Error()}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// writeDirectoryHeaders prints, in a fixed order, the header fields a static server must send
// with the key directory.
func writeDirectoryHeaders(w io.Writer, h http.Header) {
	for _, name := range []string{"Content-Type", "Cache-Control", "Content-Digest", "Signature-Input", "Signature"} {
		fmt.Fprintf(w, "%s: %s\n", name, h.Get(name))
	}
}
