package webbotauth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // WriteFile's mode passes through the umask
			t.Fatal(err)
		}
		return p
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	ecPKCS8 := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	ecSEC1DER, _ := x509.MarshalECPrivateKey(ec)
	ecSEC1 := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecSEC1DER}))

	cases := []struct {
		name    string
		path    string
		wantErr error
	}{
		{"openssl genpkey output", write("ok.pem", testKeyPEM, 0o600), nil},
		{"owner read-only", write("ro.pem", testKeyPEM, 0o400), nil},
		{"missing", filepath.Join(dir, "absent.pem"), fs.ErrNotExist},
		{"world-readable", write("world.pem", testKeyPEM, 0o644), ErrKeyExposed},
		{"group-readable", write("group.pem", testKeyPEM, 0o640), ErrKeyExposed},
		{"not PEM", write("garbage.pem", "hello", 0o600), ErrNotPKCS8PEM},
		{"SEC1 EC key", write("sec1.pem", ecSEC1, 0o600), ErrNotPKCS8PEM},
		{"PKCS#8 ECDSA key", write("ec.pem", ecPKCS8, 0o600), ErrNotEd25519},
		{"public key", write("pub.pem", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n", 0o600), ErrNotPKCS8PEM},
		{"too large", write("large.pem", strings.Repeat("A", MaxKeyFileBytes+10), 0o600), ErrNotPKCS8PEM},
		{"a directory", dir, fs.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, err := LoadKey(c.path)
			if c.wantErr == nil {
				if err != nil || Thumbprint(key.Public().(ed25519.PublicKey)) != testKeyThumbprint {
					t.Fatalf("LoadKey = %v", err)
				}
				return
			}
			var kfe *KeyFileError
			if !errors.Is(err, c.wantErr) || !errors.As(err, &kfe) || kfe.Path != c.path {
				t.Fatalf("LoadKey = %v, want a *KeyFileError for %s wrapping %v", err, c.path, c.wantErr)
			}
			if !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), ";") {
				t.Errorf("the error %q should name the file and what to do", err)
			}
		})
	}
}

func TestWriteKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.pem")
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteKey(path, key); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the key file has mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
	back, err := LoadKey(path)
	if err != nil || !back.Equal(key) {
		t.Fatalf("LoadKey after WriteKey = %v", err)
	}
	before, _ := os.ReadFile(path)
	other, _ := GenerateKey()
	if err := WriteKey(path, other); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteKey over an existing file = %v, want fs.ErrExist", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("WriteKey changed an existing key file")
	}
}

func TestLoadKeyUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can read any file")
	}
	path := filepath.Join(t.TempDir(), "wo.pem")
	if err := os.WriteFile(path, []byte(testKeyPEM), 0o200); err != nil {
		t.Fatal(err)
	}
	var kfe *KeyFileError
	if _, err := LoadKey(path); !errors.Is(err, fs.ErrPermission) || !errors.As(err, &kfe) {
		t.Fatalf("LoadKey(write-only file) = %v, want a *KeyFileError wrapping fs.ErrPermission", err)
	}
}
