// Package robots decides robots.txt (RFC 9309). STUB: the robots.txt work replaces this file.
package robots

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// File is a parsed robots.txt.
type File struct{}

func Parse(body []byte) *File { return &File{} }

// Decision is the answer for one URL.
type Decision struct {
	Allowed bool
	Line    int    // 0 when no rule matched
	Rule    string // the deciding line's text
	Reason  string
}

// Fetch sends a robots.txt request (through the door) and returns the response after redirects.
type Fetch func(ctx context.Context, robotsURL string) (*http.Response, error)

type Options struct {
	Now          func() time.Time
	MinTTL       time.Duration
	MaxTTL       time.Duration
	FetchTimeout time.Duration
}

type Keeper struct{}

func NewKeeper(opts Options) *Keeper { return &Keeper{} }

// Entry is what is known about one origin's robots.txt.
type Entry struct{}

func (k *Keeper) Lookup(ctx context.Context, u *url.URL, fetch Fetch) (*Entry, error) {
	return &Entry{}, nil
}
func (e *Entry) Decide(token string, u *url.URL) Decision      { return Decision{Allowed: true} }
func (e *Entry) CrawlDelay(token string) (time.Duration, bool) { return 0, false }
func (e *Entry) Sitemaps() []string                            { return nil }

// DisallowedError is returned for a URL robots.txt disallows.
type DisallowedError struct {
	URL      string
	Token    string
	Decision Decision
}

func (e *DisallowedError) Error() string { return "robots.txt disallows " + e.URL }
