package webbotauth

// This file decides whether a request's Web Bot Auth signature holds: RFC 9421 §3.2 verification
// with the draft's requirements (tag, created and expires, a covered authority and
// Signature-Agent member, keyid as the key's thumbprint).

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// Why a signature does not verify. Every error of [Verify] wraps one of these (or
// [ErrMissingComponent], [ErrUnsupported], [ErrMalformed]).
var (
	// ErrNoSignature: the request has no Signature-Input or no Signature field, or no signature
	// for a label Signature-Input names.
	ErrNoSignature = errors.New("the request carries no signature")
	// ErrWrongTag: no signature has tag="web-bot-auth".
	ErrWrongTag = errors.New("no signature is tagged web-bot-auth")
	// ErrExpired: the signature's expires time has passed.
	ErrExpired = errors.New("the signature has expired")
	// ErrNotYetValid: the signature was created further in the future than the allowed skew.
	ErrNotYetValid = errors.New("the signature was created in the future")
	// ErrUnknownKey: keyid names no Ed25519 key of the key set.
	ErrUnknownKey = errors.New("the signature's keyid names no key of the key set")
	// ErrBadSignature: the signature does not match the request and the key.
	ErrBadSignature = errors.New("the signature does not verify")
)

// MaxClockSkew is how far in the future a signature's created time may lie: the signer's clock
// may run a little ahead of the verifier's.
const MaxClockSkew = time.Minute

// Verification is what a verified signature established.
type Verification struct {
	Label   string    // the signature's label in Signature-Input and Signature
	KeyID   string    // the thumbprint of the key that verified it
	Agent   string    // the Signature-Agent URL the signature covers
	Created time.Time // when it was made
	Expires time.Time // when it stops being valid
	Nonce   string    // the nonce parameter, "" when there is none
}

// Verify checks the Web Bot Auth signature of r against keys at time now and reports which key
// verified it. r is a request as a server received it (or as a client is about to send it).
//
// It accepts Signature-Agent both as a Dictionary (a covered "signature-agent";key=K, whose
// member may have any key) and in the legacy form of a bare String (a covered "signature-agent").
// It requires tag="web-bot-auth", created and expires, alg absent or "ed25519", a covered
// @authority or @target-uri, and a covered Signature-Agent whose URL is https. keyid selects the
// key: an Ed25519 key of keys whose thumbprint (or kid) equals it.
//
// keys must be the key set published at Verification.Agent: check that the reported Agent is
// the URL you fetched keys from (the draft keys lookups on the URL and key pair). When several
// signatures carry the tag, the first that verifies is reported; when none does, the error joins
// the reason of each. Verify keeps no state: a signature is valid for every request to the same
// authority, method and path until it expires, so a verifier that must detect replays records
// the nonces it has seen (RFC 9421 §7.2.2).
func Verify(r *http.Request, keys JWKS, now time.Time) (Verification, error) {
	inputs := r.Header.Values("Signature-Input")
	sigs := r.Header.Values("Signature")
	if len(inputs) == 0 || len(sigs) == 0 {
		return Verification{}, ErrNoSignature
	}
	inputDict, err := httpsfv.UnmarshalDictionary(inputs)
	if err != nil {
		return Verification{}, fmt.Errorf("%w: Signature-Input: %v", ErrMalformed, err)
	}
	sigDict, err := httpsfv.UnmarshalDictionary(sigs)
	if err != nil {
		return Verification{}, fmt.Errorf("%w: Signature: %v", ErrMalformed, err)
	}
	var errs []error
	for _, label := range inputDict.Names() {
		member, _ := inputDict.Get(label)
		covered, ok := member.(httpsfv.InnerList)
		if !ok {
			errs = append(errs, fmt.Errorf("%w: Signature-Input member %q is not an inner list", ErrMalformed, label))
			continue
		}
		if tag, _ := covered.Params.Get("tag"); tag != Tag {
			continue
		}
		v, err := verifyOne(r, label, covered, sigDict, keys, now)
		if err == nil {
			return v, nil
		}
		errs = append(errs, fmt.Errorf("signature %q: %w", label, err))
	}
	if len(errs) == 0 {
		return Verification{}, ErrWrongTag
	}
	return Verification{}, errors.Join(errs...)
}

// verifyOne checks the signature labelled label, whose tag is already known to be ours.
func verifyOne(r *http.Request, label string, covered httpsfv.InnerList, sigDict *httpsfv.Dictionary, keys JWKS, now time.Time) (Verification, error) {
	v := Verification{Label: label}
	created, ok1 := intParam(covered.Params, "created")
	expires, ok2 := intParam(covered.Params, "expires")
	keyid, ok3 := stringParam(covered.Params, "keyid")
	if !ok1 || !ok2 || !ok3 {
		return v, fmt.Errorf("%w: created, expires and keyid are required (draft-ietf-webbotauth-httpsig-protocol)", ErrMalformed)
	}
	if alg, ok := covered.Params.Get("alg"); ok && alg != "ed25519" {
		return v, fmt.Errorf("%w: alg %v", ErrUnsupported, alg)
	}
	v.Created, v.Expires = time.Unix(created, 0), time.Unix(expires, 0)
	v.Nonce, _ = stringParam(covered.Params, "nonce")
	switch {
	case expires < created:
		return v, fmt.Errorf("%w: expires %d is before created %d", ErrMalformed, expires, created)
	case now.After(v.Expires):
		return v, fmt.Errorf("%w at %s", ErrExpired, v.Expires.UTC().Format(time.RFC3339))
	case v.Created.After(now.Add(MaxClockSkew)):
		return v, fmt.Errorf("%w: created %s", ErrNotYetValid, v.Created.UTC().Format(time.RFC3339))
	}

	agent, err := coveredAgent(r.Header, covered)
	if err != nil {
		return v, err
	}
	v.Agent = agent

	pub, tp, ok := keys.find(keyid)
	if !ok {
		return v, fmt.Errorf("%w: keyid %q", ErrUnknownKey, keyid)
	}
	v.KeyID = tp

	member, ok := sigDict.Get(label)
	if !ok {
		return v, fmt.Errorf("%w: Signature has no member %q", ErrNoSignature, label)
	}
	item, ok := member.(httpsfv.Item)
	sig, isBytes := item.Value.([]byte)
	if !ok || !isBytes {
		return v, fmt.Errorf("%w: Signature member %q is not a byte sequence", ErrMalformed, label)
	}
	base, err := signatureBase(requestMessage(r), covered)
	if err != nil {
		return v, err
	}
	if !ed25519.Verify(pub, base, sig) {
		return v, ErrBadSignature
	}
	return v, nil
}

// coveredAgent checks that covered includes the authority and a Signature-Agent member, and
// returns that member's URL. A member keyed K (Dictionary form) is covered as
// "signature-agent";key="K"; the legacy bare String as "signature-agent".
func coveredAgent(h http.Header, covered httpsfv.InnerList) (string, error) {
	var authority, agent bool
	var key string
	for _, item := range covered.Items {
		switch item.Value {
		case "@authority", "@target-uri":
			authority = true
		case "signature-agent":
			if agent {
				continue // the first covered member is the one reported
			}
			agent = true
			if k, ok := item.Params.Get("key"); ok {
				key, _ = k.(string)
			}
		}
	}
	if !authority {
		return "", fmt.Errorf("%w: the signature covers neither @authority nor @target-uri", ErrMissingComponent)
	}
	if !agent {
		return "", fmt.Errorf("%w: the signature does not cover Signature-Agent", ErrMissingComponent)
	}
	lines := h.Values("Signature-Agent")
	if len(lines) == 0 {
		return "", fmt.Errorf("%w: no Signature-Agent field", ErrMissingComponent)
	}
	var value any
	var params *httpsfv.Params
	if key == "" {
		// The legacy form: a String Item, which begins with a double quote.
		item, err := httpsfv.UnmarshalItem(lines)
		if err != nil {
			return "", fmt.Errorf("%w: Signature-Agent is covered without a key but is not a String: %v", ErrMalformed, err)
		}
		value, params = item.Value, item.Params
	} else {
		dict, err := httpsfv.UnmarshalDictionary(lines)
		if err != nil {
			return "", fmt.Errorf("%w: Signature-Agent is not a Dictionary: %v", ErrMalformed, err)
		}
		member, ok := dict.Get(key)
		if !ok {
			return "", fmt.Errorf("%w: Signature-Agent has no member %q", ErrMissingComponent, key)
		}
		item, ok := member.(httpsfv.Item)
		if !ok {
			return "", fmt.Errorf("%w: Signature-Agent member %q is an inner list", ErrMalformed, key)
		}
		value, params = item.Value, item.Params
	}
	s, ok := value.(string)
	if !ok || len(params.Names()) > 0 {
		return "", fmt.Errorf("%w: the Signature-Agent value must be a String without parameters", ErrMalformed)
	}
	if u, err := url.Parse(s); err != nil || u.Scheme != "https" || u.Host == "" || strings.ContainsAny(s, " \t") {
		return "", fmt.Errorf("%w: Signature-Agent %q is not an absolute https URL", ErrMalformed, s)
	}
	return s, nil
}

func intParam(p *httpsfv.Params, name string) (int64, bool) {
	v, ok := p.Get(name)
	n, isInt := v.(int64)
	return n, ok && isInt
}

func stringParam(p *httpsfv.Params, name string) (string, bool) {
	v, ok := p.Get(name)
	s, isString := v.(string)
	return s, ok && isString
}
