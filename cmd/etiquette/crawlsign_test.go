package main

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// TestCrawlSignsWithTheKey: with --sign-key every request the site sees — robots.txt and the
// pages — carries a signature that verifies against the key's public half and names the
// --signature-agent.
func TestCrawlSignsWithTheKey(t *testing.T) {
	keyFile := generatedKey(t, t.TempDir(), "bot.pem")
	key, err := webbotauth.LoadKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	published := webbotauth.PublicJWKS(key.Public().(ed25519.PublicKey))
	var mu sync.Mutex
	var checked []error
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := webbotauth.Verify(r, published, time.Now())
		mu.Lock()
		checked = append(checked, err)
		agents = append(agents, v.Agent)
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		fmt.Fprint(w, `<a href="/a">a</a>`)
	}))
	defer srv.Close()
	args := append(append([]string{"crawl", "--no-cache", "--no-discovery", "--sign-key", keyFile, "--signature-agent", "https://keys.example/dir"}, identityArgs...), srv.URL+"/")
	if code, _, errOut := runCLI(t, nil, args...); code != exitOK {
		t.Fatalf("crawl --sign-key: exit %d: %s", code, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(checked) != 3 {
		t.Errorf("the site saw %d requests, want robots.txt, / and /a", len(checked))
	}
	for i, err := range checked {
		if err != nil || agents[i] != "https://keys.example/dir" {
			t.Errorf("request %d: signature agent %q, verification %v; want a valid signature naming --signature-agent", i, agents[i], err)
		}
	}
}

// TestCrawlRefusesAnUnusableSigningKey: a key the crawl cannot sign with is unusable input
// (exit 2), said in flags, and nothing reaches the site.
func TestCrawlRefusesAnUnusableSigningKey(t *testing.T) {
	dir := t.TempDir()
	exposed := generatedKey(t, dir, "exposed.pem")
	if err := os.Chmod(exposed, 0o644); err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	ecdsaFile := filepath.Join(dir, "ecdsa.pem")
	if err := os.WriteFile(ecdsaFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	good := generatedKey(t, dir, "good.pem")

	sent := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent <- r.URL.Path
	}))
	defer srv.Close()
	httpInfo := []string{"--token", "ExampleBot", "--bot-version", "1.0", "--info-url", "http://example.org/bot"}
	cases := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"a missing key", append([]string{"--sign-key", filepath.Join(dir, "absent.pem")}, identityArgs...), "keys generate"},
		{"a directory, not a key file", append([]string{"--sign-key", dir}, identityArgs...), "--sign-key"},
		{"a key others can read", append([]string{"--sign-key", exposed}, identityArgs...), "chmod 600"},
		{"an ECDSA key", append([]string{"--sign-key", ecdsaFile}, identityArgs...), "not an Ed25519 key"},
		{"an agent without a key", append([]string{"--signature-agent", "https://keys.example/dir"}, identityArgs...), "needs --sign-key"},
		{"an http agent", append([]string{"--sign-key", good, "--signature-agent", "http://keys.example/dir"}, identityArgs...), "--signature-agent"},
		{"an http info URL and no agent", append([]string{"--sign-key", good}, httpInfo...), "--signature-agent https://"},
	}
	for _, c := range cases {
		args := append(append([]string{"crawl", "--no-cache"}, c.args...), srv.URL+"/")
		code, out, errOut := runCLI(t, nil, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "--sign") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 naming the flag and %q", c.name, code, out, errOut, c.want)
		}
		if strings.Contains(errOut, "Policy.") {
			t.Errorf("%s: the message speaks Go: %q", c.name, errOut)
		}
	}
	select {
	case p := <-sent:
		t.Errorf("a request for %s reached the site", p)
	default:
	}
}
