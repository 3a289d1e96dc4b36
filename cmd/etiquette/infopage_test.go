package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

var exampleIdentityFlags = []string{"--token", "ExampleBot", "--bot-version", "1.0", "--info-url", "https://example.org/bot", "--contact", "bot@example.org"}

func TestInfoPageWritesThePage(t *testing.T) {
	dir := t.TempDir()
	key := generatedKey(t, dir, "bot.pem")
	out := filepath.Join(dir, "site")
	args := append([]string{"info-page"}, exampleIdentityFlags...)
	args = append(args, "--rate", "1", "--concurrency", "1", "--purpose", "Checks our own links.", "--networks", "192.0.2.0/24", "--sign-key", key, "--out", out)
	code, stdout, errOut := runCLI(t, nil, args...)
	if code != exitOK {
		t.Fatalf("info-page = exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"At most 1 request starts per second", "At most 1 request in flight", "Checks our own links.", "192.0.2.0/24",
		"https://example.org/.well-known/http-message-signatures-directory"} {
		if !strings.Contains(string(page), want) || !strings.Contains(string(md), want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	jwks, err := os.ReadFile(filepath.Join(out, ".well-known", "http-message-signatures-directory"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := webbotauth.ParseJWKS(jwks)
	if err != nil || len(set.Keys) != 1 || !strings.Contains(string(page), set.Keys[0].Kid) {
		t.Fatalf("the key directory %s (%v) does not publish the key the page names", jwks, err)
	}
	if !strings.Contains(stdout, "Content-Digest: sha-256=:") || !strings.Contains(stdout, "Signature-Input: binding1=") {
		t.Errorf("info-page did not print the directory's header fields:\n%s", stdout)
	}
}

func TestInfoPageRefusals(t *testing.T) {
	dir := t.TempDir()
	key := generatedKey(t, dir, "bot.pem")
	out := filepath.Join(dir, "site")
	httpIdentity := []string{"--token", "ExampleBot", "--bot-version", "1.0", "--info-url", "http://example.org/bot"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no --out", exampleIdentityFlags, "usage"},
		{"no identity", []string{"--out", out}, "identity"},
		{"a bad network", append([]string{"--networks", "192.0.2/8", "--out", out}, exampleIdentityFlags...), "--networks"},
		{"an agent without a key", append([]string{"--signature-agent", "https://keys.example/", "--out", out}, exampleIdentityFlags...), "--sign-key"},
		{"a missing key", append([]string{"--sign-key", filepath.Join(dir, "absent.pem"), "--out", out}, exampleIdentityFlags...), "--sign-key"},
		{"an http info URL and no agent", append([]string{"--sign-key", key, "--out", out}, httpIdentity...), "--signature-agent https://"},
		{"an http agent", append([]string{"--sign-key", key, "--signature-agent", "http://keys.example/", "--out", out}, exampleIdentityFlags...), "--signature-agent"},
		{"a rate above 3 without authorisation", append([]string{"--rate", "5", "--out", out}, exampleIdentityFlags...), "--authorized-rate"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, nil, append([]string{"info-page"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", c.name, code, errOut, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused info-page wrote %s", out)
	}
}
