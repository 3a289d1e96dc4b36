// Package identity builds and validates crawler User-Agents. STUB: the identity work replaces this file.
package identity

import "errors"

// Profile is a User-Agent grammar.
type Profile string

const (
	Generic Profile = "generic"
	FAU     Profile = "fau"
)

// Identity is who the crawler says it is.
type Identity struct {
	Profile   Profile
	Token     string // generic profile: the product token
	Org, Bot  string // FAU profile
	Version   string
	InfoURL   string
	Contact   string // e-mail address
	UserToken string // overrides the user-triggered token (default <token>-User)
}

// Problem is one thing wrong (or, as a warning, worth fixing) with an identity.
type Problem struct {
	Field   string
	Message string
	Fix     string
}

// ValidationError lists every problem of an invalid identity.
type ValidationError struct{ Problems []Problem }

func (e *ValidationError) Error() string { return "invalid identity" }

// ErrNoIdentity: nothing configured.
var ErrNoIdentity = errors.New("no crawler identity configured")

func (id Identity) Validate() (warnings []Problem, err error) { return nil, nil }
func (id Identity) UserAgent() string                         { return id.Token + "/" + id.Version }
func (id Identity) CrawlToken() string                        { return id.Token }
func (id Identity) UserTriggeredToken() string                { return id.Token + "-User" }
func (id Identity) UserTriggeredAgent() string                { return id.UserTriggeredToken() + "/" + id.Version }
func (id Identity) IsZero() bool                              { return id == Identity{} }

// Parse reads a whole User-Agent string in the given profile.
func Parse(ua string, p Profile) (Identity, []Problem, error) { return Identity{}, nil, nil }

func (id Identity) From() string { return id.Contact }
