package webbotauth

// This file decides which private key files are usable: PKCS#8 PEM holding an Ed25519 key,
// readable by its owner only.

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxKeyFileBytes bounds what [LoadKey] reads: an Ed25519 PKCS#8 PEM file is about 120 bytes.
const MaxKeyFileBytes = 64 << 10

// Errors a key file can have, wrapped in a [*KeyFileError]. A missing file wraps fs.ErrNotExist,
// an unreadable one the system's error (fs.ErrPermission, …), a file that exists where
// [WriteKey] would write wraps fs.ErrExist.
var (
	// ErrKeyExposed: group or others may read or write the file. A signing key others can read
	// lets them sign as the crawler.
	ErrKeyExposed = errors.New("the key file is accessible to group or others")
	// ErrNotPKCS8PEM: the file is not a PEM "PRIVATE KEY" block in PKCS#8.
	ErrNotPKCS8PEM = errors.New("not a PKCS#8 PEM private key")
	// ErrNotEd25519: the file is a PKCS#8 key of another algorithm (RSA, ECDSA, …).
	ErrNotEd25519 = errors.New("not an Ed25519 key")
)

// KeyFileError says which key file could not be used, why (Err, for errors.Is), and what to do.
type KeyFileError struct {
	Path string
	Err  error
}

func (e *KeyFileError) Error() string {
	var fix string
	switch {
	case errors.Is(e.Err, fs.ErrNotExist):
		fix = "create one with `etiquette keys generate FILE` or `openssl genpkey -algorithm ed25519 -out FILE`"
	case errors.Is(e.Err, fs.ErrExist):
		fix = "choose another file name; an existing key is never overwritten"
	case errors.Is(e.Err, ErrKeyExposed):
		fix = "run `chmod 600` on it, and replace the key if others may have copied it"
	case errors.Is(e.Err, ErrNotPKCS8PEM), errors.Is(e.Err, ErrNotEd25519):
		fix = "give a file written by `etiquette keys generate` or `openssl genpkey -algorithm ed25519`"
	default:
		fix = "check the path and its permissions"
	}
	return fmt.Sprintf("signing key %s: %v; %s", e.Path, e.Err, fix)
}

func (e *KeyFileError) Unwrap() error { return e.Err }

// LoadKey reads the Ed25519 private key in the PKCS#8 PEM file at path, the format
// `openssl genpkey -algorithm ed25519` and [WriteKey] write. It refuses, with a [*KeyFileError],
// a file that is missing, unreadable, not a regular file (fs.ErrInvalid), larger than
// [MaxKeyFileBytes], accessible to group or others (mode & 0o077 != 0, [ErrKeyExposed]), not
// PKCS#8 PEM, or not Ed25519.
func LoadKey(path string) (ed25519.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &KeyFileError{Path: path, Err: unwrapPath(err)}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, &KeyFileError{Path: path, Err: unwrapPath(err)}
	}
	if !info.Mode().IsRegular() {
		return nil, &KeyFileError{Path: path, Err: fmt.Errorf("%w: not a regular file (%s)", fs.ErrInvalid, info.Mode().Type())}
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, &KeyFileError{Path: path, Err: fmt.Errorf("%w (mode %04o)", ErrKeyExposed, perm)}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxKeyFileBytes+1))
	if err != nil {
		return nil, &KeyFileError{Path: path, Err: unwrapPath(err)}
	}
	if len(data) > MaxKeyFileBytes {
		return nil, &KeyFileError{Path: path, Err: fmt.Errorf("%w: larger than %d bytes", ErrNotPKCS8PEM, MaxKeyFileBytes)}
	}
	key, err := ParseKey(data)
	if err != nil {
		return nil, &KeyFileError{Path: path, Err: err}
	}
	return key, nil
}

// ParseKey reads an Ed25519 private key from PKCS#8 PEM (a "PRIVATE KEY" block, RFC 8410). The
// error wraps [ErrNotPKCS8PEM] or [ErrNotEd25519].
func ParseKey(data []byte) (ed25519.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block found", ErrNotPKCS8PEM)
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%w: the PEM block is %q, not \"PRIVATE KEY\"", ErrNotPKCS8PEM, block.Type)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPKCS8PEM, err)
	}
	key, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: it holds a %T", ErrNotEd25519, parsed)
	}
	return key, nil
}

// GenerateKey returns a new Ed25519 private key from crypto/rand.
func GenerateKey() (ed25519.PrivateKey, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating an Ed25519 key: %w", err)
	}
	return key, nil
}

// WriteKey writes key to a new file at path as PKCS#8 PEM with mode 0600. It never overwrites:
// an existing file is a [*KeyFileError] wrapping fs.ErrExist.
func WriteKey(path string, key ed25519.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding the key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return &KeyFileError{Path: path, Err: unwrapPath(err)}
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		os.Remove(path)
		return &KeyFileError{Path: path, Err: err}
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return &KeyFileError{Path: path, Err: err}
	}
	return nil
}

// unwrapPath drops the *fs.PathError around err: KeyFileError names the path already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
