// Package webbotauth lets a crawler prove who it is: it signs every outgoing request with an
// Ed25519 key under RFC 9421 HTTP Message Signatures, in the profile of the IETF Web Bot Auth
// work (draft-ietf-webbotauth-httpsig-protocol), and publishes the public half in a key
// directory that a site operator can fetch and check the signatures against.
//
// A User-Agent is a claim anyone can copy; a signature is not. With signing on, every request
// carries three fields:
//
//	Signature-Agent: sig1="https://example.org/.well-known/http-message-signatures-directory"
//	Signature-Input: sig1=("@method" "@authority" "@path" "signature-agent";key="sig1");created=…;expires=…;keyid="<JWK thumbprint>";alg="ed25519";nonce="…";tag="web-bot-auth"
//	Signature: sig1=:<64-byte Ed25519 signature>:
//
// The pieces, and which one most callers want:
//   - [Layer] signs every request that passes it; the door puts it just above net/http, so each
//     request that really goes out — redirect hops and retries included — is signed afresh, and a
//     cache hit signs nothing. Build its [Signer] with [NewSigner].
//   - [LoadKey], [GenerateKey], [WriteKey]: the private key, as a PKCS#8 PEM file such as
//     `openssl genpkey -algorithm ed25519` writes.
//   - [Directory] serves the key directory (a JWK Set, one signed possession proof per key);
//     [Directory.Response] gives the body and header values for static hosting.
//   - [Verify] checks a signed request against a JWK Set: for tests, and for site operators.
//
// No library the project may use implements RFC 9421, so the signature base (RFC 9421 §2.5) is
// built here, on github.com/dunglas/httpsfv for the RFC 9651 structured fields it is made of; the
// published test vectors (RFC 9421 Appendix B.2.6, the draft's Ed25519 examples and its signed
// directory response) pin it byte for byte.
package webbotauth
