package main

// This file decides the keys commands: create a signing key (keys generate), and print what to
// publish for it (keys jwks, keys directory).

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

var keysDoc = commandDoc{
	name:  "keys",
	usage: "generate FILE | jwks FILE... | directory --directory-authority HOST FILE...",
	about: `Creates the Ed25519 key a crawl signs its requests with (Web Bot Auth, RFC 9421 HTTP Message
Signatures; crawl --sign-key FILE), and prints what to publish so that sites can check the
signatures: the key's JWK Set, or the whole signed key directory. Run 'etiquette keys generate -h',
'etiquette keys jwks -h' or 'etiquette keys directory -h' for their arguments and flags.`,
	exits: `  0  done
  1  the key could not be made or signed
  2  unusable input: usage, a key file that is missing, readable by others or not Ed25519`,
}

var keysGenerateDoc = commandDoc{
	name:  "keys generate",
	usage: "FILE",
	about: `Writes a new Ed25519 signing key to FILE (PKCS#8 PEM, mode 0600) and prints its thumbprint
(RFC 7638), the keyid of its signatures, on stdout. An existing file is never overwritten.
Publish the key's public half with 'etiquette keys directory' or 'etiquette info-page --sign-key
FILE'; sign a crawl with 'etiquette crawl --sign-key FILE'.`,
	args: `  FILE  where to write the key; it must not exist`,
	exits: `  0  written; the thumbprint on stdout
  1  no random numbers to make a key from
  2  unusable input: usage, FILE exists or cannot be written`,
}

var keysJWKSDoc = commandDoc{
	name:  "keys jwks",
	usage: "FILE...",
	about: `Prints the public JWK Set (RFC 7517) of the keys, each with its thumbprint as kid; no private part.`,
	args:  `  FILE...  signing keys, as 'etiquette keys generate' writes them (PKCS#8 PEM, Ed25519, mode 0600)`,
	exits: `  0  printed
  2  unusable input: usage, a key file that is missing, unreadable, readable by others or not Ed25519`,
}

var keysDirectoryDoc = commandDoc{
	name:  "keys directory",
	usage: "--directory-authority HOST [--validity D] [--max-age D] FILE...",
	about: `Prints the key directory for static hosting at
https://HOST/.well-known/http-message-signatures-directory: the response header fields to serve
it with (its signatures among them), a blank line, then the body to serve byte for byte. The
signatures are bound to HOST and expire after --validity: generate it again before then.`,
	args: `  FILE...  signing keys, as 'etiquette keys generate' writes them (PKCS#8 PEM, Ed25519, mode 0600)`,
	exits: `  0  printed
  1  the directory could not be signed
  2  unusable input: usage, no --directory-authority, a key file that is missing, unreadable,
     readable by others or not Ed25519`,
}

// keysGroup is "keys generate FILE", "keys jwks FILE..." and "keys directory --directory-authority HOST FILE...".
var keysGroup = group{doc: keysDoc, subs: []subcommand{{"generate", runKeysGenerate}, {"jwks", runKeysJWKS}, {"directory", runKeysDirectory}}}

func runKeysGenerate(args []string, e env) (int, error) {
	pos, err := parseFlags(newFlagSet(keysGenerateDoc), keysGenerateDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 1 {
		return exitUsage, keysGenerateDoc.argErrorf("want one FILE, got %d arguments", len(pos))
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
	pos, err := parseFlags(newFlagSet(keysJWKSDoc), keysJWKSDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	keys, err := loadKeys(keysJWKSDoc, pos)
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
	fs := newFlagSet(keysDirectoryDoc)
	authority := fs.String("directory-authority", "", "`HOST`: the host (and port, if not 443) that serves the directory, e.g. example.org; the signatures are bound to it")
	validity := fs.Duration("validity", webbotauth.DefaultProofValidity, "`D`: how long the directory's signatures stay valid; generate it again before then")
	maxAge := fs.Duration("max-age", webbotauth.DefaultDirectoryMaxAge, "`D`: how long verifiers may cache the directory")
	pos, err := parseFlags(fs, keysDirectoryDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	keys, err := loadKeys(keysDirectoryDoc, pos)
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

// loadKeys loads every key file the command's arguments name; it wants at least one.
func loadKeys(d commandDoc, files []string) ([]ed25519.PrivateKey, error) {
	if len(files) == 0 {
		return nil, d.argErrorf("want at least one key FILE")
	}
	keys := make([]ed25519.PrivateKey, 0, len(files))
	for _, f := range files {
		k, err := webbotauth.LoadKey(f)
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
