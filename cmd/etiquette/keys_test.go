package main

import (
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// generatedKey runs keys generate for a new file in dir and returns its path.
func generatedKey(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if code, _, errOut := runCLI(t, nil, "keys", "generate", path); code != exitOK {
		t.Fatalf("keys generate %s = exit %d: %s", path, code, errOut)
	}
	return path
}

func TestKeysGenerate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.pem")
	code, out, errOut := runCLI(t, nil, "keys", "generate", path)
	if code != exitOK {
		t.Fatalf("keys generate = exit %d: %s", code, errOut)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, mode %v; want mode 0600", err, info.Mode().Perm())
	}
	key, err := webbotauth.LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := webbotauth.NewSigner(key, webbotauth.SignerOptions{InfoURL: "https://example.org/"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != signer.KeyID() {
		t.Errorf("keys generate printed %q, want the thumbprint %s", out, signer.KeyID())
	}
	before, _ := os.ReadFile(path)
	if code, _, errOut := runCLI(t, nil, "keys", "generate", path); code != exitUsage || !strings.Contains(errOut, "never overwritten") {
		t.Errorf("keys generate over an existing key = exit %d, %q; want 2 and a refusal", code, errOut)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("keys generate overwrote an existing key")
	}
}

func TestKeysJWKSAndDirectory(t *testing.T) {
	path := generatedKey(t, t.TempDir(), "bot.pem")
	key, _ := webbotauth.LoadKey(path)
	seed := base64.RawURLEncoding.EncodeToString(key.Seed())

	code, out, errOut := runCLI(t, nil, "keys", "jwks", path)
	if code != exitOK {
		t.Fatalf("keys jwks = exit %d: %s", code, errOut)
	}
	set, err := webbotauth.ParseJWKS([]byte(out))
	if err != nil || len(set.Keys) != 1 || strings.Contains(out, seed) {
		t.Fatalf("keys jwks printed %s (%v)", out, err)
	}

	code, out, errOut = runCLI(t, nil, "keys", "directory", "--directory-authority", "example.org", path)
	if code != exitOK {
		t.Fatalf("keys directory = exit %d: %s", code, errOut)
	}
	head, body, ok := strings.Cut(out, "\n\n")
	if !ok {
		t.Fatalf("keys directory printed no blank line between header fields and body:\n%s", out)
	}
	if _, err := webbotauth.ParseJWKS([]byte(body)); err != nil || strings.HasSuffix(body, "\n") {
		t.Fatalf("the body %q is not the exact JWK Set (%v)", body, err)
	}
	sum := sha256.Sum256([]byte(body))
	for _, want := range []string{
		"Content-Type: " + webbotauth.DirectoryMediaType,
		"Cache-Control: max-age=86400",
		"Content-Digest: sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":",
		`tag="http-message-signatures-directory"`,
		"Signature: binding1=:",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("keys directory header fields lack %q:\n%s", want, head)
		}
	}
}

func TestKeysRefusals(t *testing.T) {
	dir := t.TempDir()
	exposed := generatedKey(t, dir, "exposed.pem")
	if err := os.Chmod(exposed, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"keys"}, "usage"},
		{[]string{"keys", "rotate"}, "unknown keys command"},
		{[]string{"keys", "generate"}, "usage"},
		{[]string{"keys", "jwks"}, "usage"},
		{[]string{"keys", "jwks", filepath.Join(dir, "absent.pem")}, "keys generate"},
		{[]string{"keys", "jwks", exposed}, "chmod 600"},
		{[]string{"keys", "directory", exposed}, "chmod 600"},
		{[]string{"keys", "directory", filepath.Join(dir, "absent.pem")}, "no such file"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, nil, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v = exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	good := generatedKey(t, dir, "good.pem")
	if code, _, errOut := runCLI(t, nil, "keys", "directory", good); code != exitUsage || !strings.Contains(errOut, "--directory-authority") {
		t.Errorf("keys directory without an authority = exit %d, %q", code, errOut)
	}
}
