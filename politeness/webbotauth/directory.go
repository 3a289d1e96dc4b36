package webbotauth

// This file decides what the key directory serves: the JWK Set of the public keys, with
// Content-Digest and one possession proof per key (the directory draft's signed response).

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dunglas/httpsfv"
)

const (
	// DirectoryMediaType is the media type of a key directory at the well-known URI.
	DirectoryMediaType = "application/http-message-signatures-directory+json"
	// DirectoryTag is the tag parameter of a directory's possession proofs.
	DirectoryTag = "http-message-signatures-directory"
	// DefaultDirectoryMaxAge is how long verifiers may cache the directory (Cache-Control max-age).
	DefaultDirectoryMaxAge = 24 * time.Hour
	// DefaultProofValidity is how long a directory's possession proofs stay valid. The draft
	// advises a validity well beyond how often the directory is republished: a static file is
	// signed once and served until it is regenerated.
	DefaultProofValidity = 7 * 24 * time.Hour
)

// DirectoryOptions configures a [Directory]. The zero value caches for 24 hours, makes proofs
// valid for 7 days and reads the system clock.
type DirectoryOptions struct {
	// MaxAge is the Cache-Control max-age; 0 means DefaultDirectoryMaxAge.
	MaxAge time.Duration
	// ProofValidity is expires minus created of each possession proof; 0 means
	// DefaultProofValidity.
	ProofValidity time.Duration
	// Now reads the clock when the handler signs; nil means time.Now.
	Now func() time.Time
}

// Directory is a key directory: the public JWK Set of one or more signing keys (kid = the RFC
// 7638 thumbprint, never a private member), served as DirectoryMediaType with Cache-Control,
// Content-Digest (RFC 9530, sha-256) and, per key, an RFC 9421 signature over
// ("@authority";req "content-digest") tagged DirectoryTag, which proves that the holder of each
// key published the set at that authority. Create it with [NewDirectory]; most callers mount it
// at [WellKnownPath] (infopage.Handler does). For static hosting use [Directory.Response].
type Directory struct {
	keys   []ed25519.PrivateKey
	body   []byte
	digest string
	opts   DirectoryOptions
}

// NewDirectory returns the directory of keys (at least one).
func NewDirectory(keys []ed25519.PrivateKey, o DirectoryOptions) (*Directory, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("webbotauth: a key directory needs at least one key")
	}
	pubs := make([]ed25519.PublicKey, len(keys))
	for i, k := range keys {
		if len(k) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("webbotauth: key %d has %d bytes, not the %d of an Ed25519 private key", i, len(k), ed25519.PrivateKeySize)
		}
		pubs[i] = k.Public().(ed25519.PublicKey)
	}
	body, err := json.Marshal(PublicJWKS(pubs...))
	if err != nil {
		return nil, fmt.Errorf("webbotauth: %w", err)
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultDirectoryMaxAge
	}
	if o.ProofValidity <= 0 {
		o.ProofValidity = DefaultProofValidity
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Directory{keys: keys, body: body, digest: contentDigest(body), opts: o}, nil
}

// JWKS returns the body the directory serves: the public JWK Set, compact JSON.
func (d *Directory) JWKS() []byte { return append([]byte(nil), d.body...) }

// Response returns the body and the header fields of the directory as served to a request for
// authority (host[:port], as verifiers will send it in Host) at time now: Content-Type,
// Cache-Control, Content-Digest, Signature-Input and Signature. A static web server configured
// with exactly these values serves what the handler would.
func (d *Directory) Response(authority string, now time.Time) ([]byte, http.Header, error) {
	h := http.Header{}
	h.Set("Content-Type", DirectoryMediaType)
	h.Set("Cache-Control", "max-age="+strconv.FormatInt(int64(d.opts.MaxAge/time.Second), 10))
	h.Set("Content-Digest", d.digest)
	if err := d.sign(h, normalizeAuthority(authority, "https"), now); err != nil {
		return nil, nil, err
	}
	return d.JWKS(), h, nil
}

// ServeHTTP serves the directory to GET and HEAD, signed for the request's authority.
func (d *Directory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	req := requestMessage(r)
	body, h, err := d.Response(req.authority, d.opts.Now())
	if err != nil {
		http.Error(w, "cannot sign the key directory", http.StatusInternalServerError)
		return
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// sign adds one possession proof per key to h, which already holds Content-Digest.
func (d *Directory) sign(h http.Header, authority string, now time.Time) error {
	request := &message{authority: authority}
	resp := &message{status: http.StatusOK, header: h, request: request}
	sigs := newSignatures()
	for i, k := range d.keys {
		covered := directoryCovered(Thumbprint(k.Public().(ed25519.PublicKey)), now.Unix(), now.Add(d.opts.ProofValidity).Unix())
		if err := sigs.add("binding"+strconv.Itoa(i+1), resp, covered, k); err != nil {
			return fmt.Errorf("webbotauth: signing the directory: %w", err)
		}
	}
	return sigs.write(h)
}

// directoryCovered is the covered components and parameters of a possession proof, in the
// draft's order: ("@authority";req "content-digest");created;expires;keyid;tag.
func directoryCovered(keyid string, created, expires int64) httpsfv.InnerList {
	authority := httpsfv.NewItem("@authority")
	authority.Params.Add("req", true)
	params := httpsfv.NewParams()
	params.Add("created", created)
	params.Add("expires", expires)
	params.Add("keyid", keyid)
	params.Add("tag", DirectoryTag)
	return httpsfv.InnerList{Items: []httpsfv.Item{authority, httpsfv.NewItem("content-digest")}, Params: params}
}

// contentDigest is the RFC 9530 Content-Digest field value of body with sha-256.
func contentDigest(body []byte) string {
	sum := sha256.Sum256(body)
	d := httpsfv.NewDictionary()
	d.Add("sha-256", httpsfv.NewItem(sum[:]))
	s, _ := httpsfv.Marshal(d) // a byte sequence under a fixed key always serialises
	return s
}
