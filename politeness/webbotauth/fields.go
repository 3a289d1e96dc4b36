package webbotauth

// This file decides how signatures are written into a message: each under its label, in the
// Signature-Input and Signature dictionaries (RFC 9421 §4.1, §4.2).

import (
	"crypto/ed25519"
	"fmt"
	"net/http"

	"github.com/dunglas/httpsfv"
)

// signatures collects the signatures of one message before they are written to its fields.
type signatures struct{ input, sig *httpsfv.Dictionary }

func newSignatures() signatures {
	return signatures{input: httpsfv.NewDictionary(), sig: httpsfv.NewDictionary()}
}

// add signs the signature base of m for covered with key and records it under label.
func (s signatures) add(label string, m *message, covered httpsfv.InnerList, key ed25519.PrivateKey) error {
	base, err := signatureBase(m, covered)
	if err != nil {
		return err
	}
	s.input.Add(label, covered)
	s.sig.Add(label, httpsfv.NewItem(ed25519.Sign(key, base)))
	return nil
}

// write sets Signature-Input and Signature in h, replacing any there were.
func (s signatures) write(h http.Header) error {
	input, err := httpsfv.Marshal(s.input)
	if err != nil {
		return fmt.Errorf("webbotauth: Signature-Input: %w", err)
	}
	sig, err := httpsfv.Marshal(s.sig)
	if err != nil {
		return fmt.Errorf("webbotauth: Signature: %w", err)
	}
	h.Set("Signature-Input", input)
	h.Set("Signature", sig)
	return nil
}
