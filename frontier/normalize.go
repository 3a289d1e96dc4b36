package frontier

// This file decides which spellings of a URL are one URL to the frontier, and under which origin
// it is queued.

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/politecrawl/etiquette/politeness/origin"
)

// MaxURLBytes is the longest URL, after normalisation, that the frontier queues. It is the limit
// the sitemaps protocol sets (sitemaps.org: "less than 2,048 characters"); a longer URL is almost
// always a generated trap (session IDs, endlessly appended parameters), and the bound keeps a
// full queue of 100,000 URLs under about 200 MB even in the worst case.
const MaxURLBytes = 2048

// ErrBadURL is wrapped by the error of Push for a URL that is not an absolute http(s) URL with a
// host.
var ErrBadURL = errors.New("frontier: want an absolute http(s) URL with a host")

// ErrURLTooLong is wrapped by the error of Push for a URL longer than [MaxURLBytes].
var ErrURLTooLong = fmt.Errorf("frontier: URL longer than %d bytes", MaxURLBytes)

// Normalize returns raw in the form the frontier keeps and de-duplicates it (see
// [Frontier.Push]): two spellings of one URL normalise to one string. The error wraps
// [ErrBadURL] or [ErrURLTooLong].
func Normalize(raw string) (string, error) {
	u, _, err := normalize(raw)
	return u, err
}

// normalize returns raw in the form the frontier keeps and de-duplicates it — scheme and host
// lower-cased, the host IDNA-encoded, the scheme's default port and the fragment removed, an
// empty path written "/" — and the budget key of its origin. Percent-encoding, the query and its
// order are kept as they are: servers may treat them as different resources.
func normalize(raw string) (u, key string, err error) {
	p, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	if p.Opaque != "" {
		return "", "", fmt.Errorf("%w: %q", ErrBadURL, raw)
	}
	if key, err = origin.BudgetKey(p); err != nil {
		return "", "", fmt.Errorf("%w: %q", ErrBadURL, raw)
	}
	host, err := origin.Host(p)
	if err != nil {
		return "", "", fmt.Errorf("%w: %q", ErrBadURL, raw)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := p.Port(); port != "" && !(p.Scheme == "http" && port == "80") && !(p.Scheme == "https" && port == "443") {
		host += ":" + port
	}
	p.Host = host
	p.Fragment, p.RawFragment = "", ""
	if p.Path == "" {
		p.Path, p.RawPath = "/", ""
	}
	u = p.String()
	if len(u) > MaxURLBytes {
		return "", "", fmt.Errorf("%w: %d bytes (%.60q…)", ErrURLTooLong, len(u), u)
	}
	return u, key, nil
}

// splitURL splits a normalised URL into what precedes its path ("scheme://[userinfo@]host[:port]")
// and the rest (path and query). Userinfo is percent-encoded in a normalised URL, so the first
// "/" after "://" starts the path.
func splitURL(u string) (prefix, rest string) {
	i := strings.Index(u, "://")
	if i < 0 {
		return u, ""
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return u, ""
	}
	return u[:i+3+j], u[i+3+j:]
}
