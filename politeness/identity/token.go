package identity

// This file decides whether a product token, on its own, could name a crawler of this package.

import "fmt"

// maxTokenLen bounds a token checked on its own: it leaves room within MaxUserAgentLen for the
// "-User" of the user-triggered form, the version, the info URL and the contact.
const maxTokenLen = MaxUserAgentLen / 2

// ValidateToken checks a product token on its own — the name a robots.txt User-agent line
// addresses (RFC 9309 §2.2.1) — and returns nil when some valid [Identity] of either profile
// could send it: as Token or UserToken in the generic profile, or as FAU-<Org>-<Bot> (or a FAU
// UserToken) in the FAU profile. Otherwise it returns a [*ValidationError] (errors.Is
// [ErrInvalid]) with the problems of the profile the token looks like ([Detect]). Warnings,
// such as digits in a FAU name, do not make a token invalid and are not returned. A token longer
// than half of [MaxUserAgentLen] is refused unread.
func ValidateToken(token string) error {
	if len(token) > maxTokenLen {
		var c checker
		c.fail(FieldToken, fmt.Sprintf("the token is %d bytes: a User-Agent is at most %d bytes and must leave room for the version, the info URL and the contact", len(token), MaxUserAgentLen),
			fmt.Sprintf("use a name of at most %d bytes, e.g. ExampleBot", maxTokenLen))
		return c.err()
	}
	var generic checker
	generic.genericToken(FieldToken, token)
	if len(generic.errs) == 0 {
		return nil
	}
	if Detect(token) != FAU {
		return generic.err()
	}
	var fau checker
	if org, bot, ok := fau.fauName(FieldToken, token); ok {
		fau.fauPart(FieldOrg, org)
		fau.fauPart(FieldBot, bot)
	}
	return fau.err()
}
