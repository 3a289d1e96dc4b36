package webbotauth

// This file decides the exact bytes a signature covers: the RFC 9421 §2.5 signature base, built
// from the component values of RFC 9421 §2.1 (fields) and §2.2 (derived components). No library
// the project may use implements RFC 9421, so this is ours; the published vectors in base_test.go
// and verify_test.go pin it byte for byte.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dunglas/httpsfv"
)

var (
	// ErrMissingComponent: a covered component has no value in the message (a field that is
	// absent, a dictionary member that does not exist, @status on a request, …).
	ErrMissingComponent = errors.New("a covered component is missing from the message")
	// ErrUnsupported: the signature uses something this package does not implement (an
	// algorithm other than ed25519, a component parameter other than key and req, …).
	ErrUnsupported = errors.New("not supported by this verifier")
	// ErrMalformed: Signature, Signature-Input or Signature-Agent is not what RFC 9421 and the
	// Web Bot Auth draft define.
	ErrMalformed = errors.New("malformed signature fields")
)

// message is what a signature is computed over: a request, or a response together with the
// request it answers (for components with the req parameter, RFC 9421 §2.4).
type message struct {
	method    string
	scheme    string
	authority string // normalised: lower case, no default port (RFC 9421 §2.2.3)
	target    *url.URL
	header    http.Header
	status    int      // responses only
	request   *message // responses only: the request, for ;req
}

// requestMessage describes r as the signer sends it or as the server received it. The scheme is
// the URL's on the client side; on the server side, where r.URL has none, https when r arrived
// over TLS.
func requestMessage(r *http.Request) *message {
	scheme := strings.ToLower(r.URL.Scheme)
	if scheme == "" {
		scheme = "http"
		if r.TLS != nil {
			scheme = "https"
		}
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	return &message{method: method, scheme: scheme, authority: normalizeAuthority(host, scheme), target: r.URL, header: r.Header}
}

// normalizeAuthority lower-cases host and drops the scheme's default port (RFC 9110 §4.2.3).
func normalizeAuthority(host, scheme string) string {
	host = strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil {
		if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
			if strings.Contains(h, ":") {
				return "[" + h + "]"
			}
			return h
		}
	}
	return host
}

// signatureBase returns the signature base of m for the covered components and signature
// parameters in covered (RFC 9421 §2.5): one line per component, `identifier: value`, then the
// @signature-params line, which is covered itself, serialised.
func signatureBase(m *message, covered httpsfv.InnerList) ([]byte, error) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, item := range covered.Items {
		id, err := httpsfv.Marshal(item)
		if err != nil {
			return nil, fmt.Errorf("%w: component identifier: %v", ErrMalformed, err)
		}
		if seen[id] {
			return nil, fmt.Errorf("%w: component %s is covered twice (RFC 9421 §2.5)", ErrMalformed, id)
		}
		seen[id] = true
		v, err := componentValue(m, item)
		if err != nil {
			return nil, err
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("%w: the value of %s contains a line break", ErrMalformed, id)
		}
		b.WriteString(id)
		b.WriteString(": ")
		b.WriteString(v)
		b.WriteByte('\n')
	}
	params, err := httpsfv.Marshal(covered)
	if err != nil {
		return nil, fmt.Errorf("%w: signature parameters: %v", ErrMalformed, err)
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(params)
	return []byte(b.String()), nil
}

// componentValue returns the value of one covered component in m.
func componentValue(m *message, item httpsfv.Item) (string, error) {
	name, ok := item.Value.(string)
	if !ok || name == "" || name != strings.ToLower(name) {
		return "", fmt.Errorf("%w: a component identifier must be a non-empty lower-case string (RFC 9421 §2.1), got %v", ErrMalformed, item.Value)
	}
	var key string
	for _, p := range item.Params.Names() {
		v, _ := item.Params.Get(p)
		switch p {
		case "req":
			if v != true {
				return "", fmt.Errorf("%w: %s;req must be a boolean true", ErrMalformed, name)
			}
			if m.request == nil {
				return "", fmt.Errorf("%w: %s;req in a request (RFC 9421 §2.4)", ErrMalformed, name)
			}
			m = m.request
		case "key":
			s, ok := v.(string)
			if !ok || strings.HasPrefix(name, "@") {
				return "", fmt.Errorf("%w: the key parameter needs a string and a field name", ErrMalformed)
			}
			key = s
		default:
			return "", fmt.Errorf("%w: component parameter %q on %s", ErrUnsupported, p, name)
		}
	}
	if strings.HasPrefix(name, "@") {
		return derivedValue(m, name)
	}
	return fieldValue(m.header, name, key)
}

// derivedValue returns a derived component (RFC 9421 §2.2).
func derivedValue(m *message, name string) (string, error) {
	if m.status != 0 {
		if name == "@status" {
			return strconv.Itoa(m.status), nil // §2.2.9: the three-digit status code
		}
		return "", fmt.Errorf("%w: %s is a request component; in a response it needs ;req (RFC 9421 §2.4)", ErrMalformed, name)
	}
	switch name {
	case "@method": // §2.2.1: as sent, case-sensitive
		return m.method, nil
	case "@authority": // §2.2.3
		if m.authority == "" {
			return "", fmt.Errorf("%w: the request has no authority", ErrMissingComponent)
		}
		return m.authority, nil
	case "@scheme": // §2.2.4
		return m.scheme, nil
	case "@target-uri": // §2.2.2
		return m.scheme + "://" + m.authority + m.target.RequestURI(), nil
	case "@request-target": // §2.2.5
		return m.target.RequestURI(), nil
	case "@path": // §2.2.6: an empty path is "/"
		p, _, _ := strings.Cut(m.target.RequestURI(), "?")
		if p == "" {
			p = "/"
		}
		return p, nil
	case "@query": // §2.2.7: with its leading "?", "?" when there is none
		return "?" + m.target.RawQuery, nil
	case "@status":
		return "", fmt.Errorf("%w: @status in a request", ErrMissingComponent)
	}
	return "", fmt.Errorf("%w: derived component %s", ErrUnsupported, name)
}

// fieldValue returns an HTTP field component (RFC 9421 §2.1): every field line's value with
// surrounding whitespace removed, joined by ", "; with key, the serialised value of that member
// of the field parsed as an RFC 9651 Dictionary (§2.1.2).
func fieldValue(h http.Header, name, key string) (string, error) {
	lines := h.Values(name)
	if len(lines) == 0 {
		return "", fmt.Errorf("%w: no %s field", ErrMissingComponent, name)
	}
	if key == "" {
		vals := make([]string, len(lines))
		for i, l := range lines {
			vals[i] = strings.Trim(l, " \t")
		}
		return strings.Join(vals, ", "), nil
	}
	dict, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return "", fmt.Errorf("%w: %s is not a structured-field dictionary: %v", ErrMalformed, name, err)
	}
	member, ok := dict.Get(key)
	if !ok {
		return "", fmt.Errorf("%w: %s has no member %q", ErrMissingComponent, name, key)
	}
	v, err := marshalMember(member)
	if err != nil {
		return "", fmt.Errorf("%w: %s member %q: %v", ErrMalformed, name, key, err)
	}
	return v, nil
}

func marshalMember(m httpsfv.Member) (string, error) {
	switch v := m.(type) {
	case httpsfv.Item:
		return httpsfv.Marshal(v)
	case httpsfv.InnerList:
		return httpsfv.Marshal(v)
	}
	return "", fmt.Errorf("unexpected member type %T", m)
}
