package webbotauth

// This file decides what a signed request carries: which components are covered, with which
// parameters, under which label, pointing to which key directory.

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/dunglas/httpsfv"
)

const (
	// Tag is the tag parameter of every Web Bot Auth request signature.
	Tag = "web-bot-auth"
	// Label is the signature label, and the key of the Signature-Agent member it covers.
	Label = "sig1"
	// WellKnownPath is where a key directory is served (the directory draft's well-known URI).
	WellKnownPath = "/.well-known/http-message-signatures-directory"
	// DefaultExpiry is how long a request signature stays valid when SignerOptions.Expiry is 0:
	// long enough for a slow response, short enough that a captured signature is soon useless.
	DefaultExpiry = 5 * time.Minute
	// MaxExpiry is the longest validity a signer accepts (the draft recommends at most 24 h).
	MaxExpiry = 24 * time.Hour
	// NonceBytes is the number of random bytes in each signature's nonce.
	NonceBytes = 64
)

// coveredComponents are what every request signature covers: the method, the authority (the
// draft's minimum, which binds the signature to one site), the path, and the Signature-Agent
// member, so the directory URL cannot be swapped under the signature.
var coveredComponents = []string{"@method", "@authority", "@path", "signature-agent"}

var (
	// ErrAgentNotHTTPS: the Signature-Agent URL is not an absolute https URL with a host. The
	// draft requires https, because a verifier fetches the key directory from it.
	ErrAgentNotHTTPS = errors.New("the signature agent must be an absolute https URL")
	// ErrBadExpiry: SignerOptions.Expiry is under a second or above MaxExpiry.
	ErrBadExpiry = errors.New("the signature expiry must lie between 1 s and 24 h")
)

// SignerOptions configures a [Signer]. The zero value signs with a 5-minute expiry, the system
// clock and crypto/rand, and needs InfoURL or Agent.
type SignerOptions struct {
	// Agent is the https URL of the key directory, sent in Signature-Agent. Empty means the
	// well-known directory at the origin of InfoURL (see [DirectoryURL]).
	Agent string
	// InfoURL is the crawler's info page (identity.Identity.InfoURL); used when Agent is empty.
	InfoURL string
	// Expiry is how long each signature is valid after it is made; 0 means DefaultExpiry.
	Expiry time.Duration
	// Now reads the clock; nil means time.Now.
	Now func() time.Time
	// Rand supplies the nonces; nil means crypto/rand.
	Rand io.Reader
}

// Signer signs requests with one Ed25519 key. Create it with [NewSigner]; the zero value is not
// usable. A Signer is safe for concurrent use. Most callers hand it to [Layer] and never call
// Sign themselves.
type Signer struct {
	key    ed25519.PrivateKey
	keyID  string
	agent  string
	field  string // the Signature-Agent field value
	expiry time.Duration
	now    func() time.Time
	rand   io.Reader
}

// NewSigner returns a signer for key. It fails when the directory URL (o.Agent, or the one
// derived from o.InfoURL) is not https ([ErrAgentNotHTTPS]), when o.Expiry is out of range
// ([ErrBadExpiry]), or when key is not a whole Ed25519 private key.
func NewSigner(key ed25519.PrivateKey, o SignerOptions) (*Signer, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("the signing key has %d bytes, not the %d of an Ed25519 private key", len(key), ed25519.PrivateKeySize)
	}
	agent := o.Agent
	if agent == "" {
		var err error
		if agent, err = DirectoryURL(o.InfoURL); err != nil {
			return nil, err
		}
	} else if err := checkAgent(agent); err != nil {
		return nil, err
	}
	switch {
	case o.Expiry == 0:
		o.Expiry = DefaultExpiry
	case o.Expiry < time.Second || o.Expiry > MaxExpiry:
		return nil, fmt.Errorf("%w (got %s)", ErrBadExpiry, o.Expiry)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	dict := httpsfv.NewDictionary()
	dict.Add(Label, httpsfv.NewItem(agent))
	field, err := httpsfv.Marshal(dict)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAgentNotHTTPS, err)
	}
	return &Signer{key: key, keyID: Thumbprint(key.Public().(ed25519.PublicKey)), agent: agent, field: field,
		expiry: o.Expiry, now: o.Now, rand: o.Rand}, nil
}

// DirectoryURL returns the well-known key directory at the origin of infoURL, e.g.
// https://example.org/.well-known/http-message-signatures-directory for
// https://example.org/bot. It fails with [ErrAgentNotHTTPS] for an http info URL: the directory
// must be served over https, so such a crawler names its directory explicitly.
func DirectoryURL(infoURL string) (string, error) {
	u, err := url.Parse(infoURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%w: the info URL %q is not https, so the key directory cannot be derived from it", ErrAgentNotHTTPS, infoURL)
	}
	return (&url.URL{Scheme: "https", Host: u.Host, Path: WellKnownPath}).String(), nil
}

func checkAgent(agent string) error {
	u, err := url.Parse(agent)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return fmt.Errorf("%w (got %q)", ErrAgentNotHTTPS, agent)
	}
	return nil
}

// KeyID returns the keyid of the signatures: the key's RFC 7638 thumbprint.
func (s *Signer) KeyID() string { return s.keyID }

// Agent returns the key directory URL the signatures point to.
func (s *Signer) Agent() string { return s.agent }

// Expiry returns how long each signature stays valid after it is made.
func (s *Signer) Expiry() time.Duration { return s.expiry }

// PublicKey returns the public half of the signing key.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// Sign adds Signature-Agent, Signature-Input and Signature to req, replacing any it had. The
// caller must own req (an http.RoundTripper clones it first). The signature covers req's method,
// authority and path as they will be sent, so sign after the last change to them.
func (s *Signer) Sign(req *http.Request) error {
	nonce := make([]byte, NonceBytes)
	if _, err := io.ReadFull(s.rand, nonce); err != nil {
		return fmt.Errorf("webbotauth: reading a nonce: %w", err)
	}
	created := s.now().Unix()
	params := httpsfv.NewParams()
	params.Add("created", created)
	params.Add("expires", created+int64(s.expiry/time.Second))
	params.Add("keyid", s.keyID)
	params.Add("alg", "ed25519")
	params.Add("nonce", b64(nonce))
	params.Add("tag", Tag)
	covered := httpsfv.InnerList{Params: params}
	for _, c := range coveredComponents {
		item := httpsfv.NewItem(c)
		if c == "signature-agent" {
			item.Params.Add("key", Label)
		}
		covered.Items = append(covered.Items, item)
	}

	req.Header.Set("Signature-Agent", s.field)
	sigs := newSignatures()
	if err := sigs.add(Label, requestMessage(req), covered, s.key); err != nil {
		return fmt.Errorf("webbotauth: signing %s: %w", req.URL.Redacted(), err)
	}
	return sigs.write(req.Header)
}
