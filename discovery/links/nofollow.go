package links

// This file decides when a page asks robots not to follow its links: a robots meta tag or an
// X-Robots-Tag header with nofollow or none.

import (
	"net/http"
	"strings"
)

// HeaderNofollow reports whether the response's X-Robots-Tag header says nofollow (or none).
// A crawler that sees it follows none of the page's links.
func HeaderNofollow(h http.Header) bool {
	for _, v := range h.Values("X-Robots-Tag") {
		if Nofollow(v) {
			return true
		}
	}
	return false
}

// Nofollow reports whether a robots directive list — a robots meta tag's content, or one
// X-Robots-Tag value — says nofollow or none. X-Robots-Tag may name a bot first
// ("otherbot: nofollow"); a nofollow for any bot is honoured, the cautious reading.
func Nofollow(directives string) bool {
	for _, part := range strings.Split(strings.ToLower(directives), ",") {
		part = strings.TrimSpace(part)
		if _, after, ok := strings.Cut(part, ":"); ok {
			part = strings.TrimSpace(after)
		}
		if part == "nofollow" || part == "none" {
			return true
		}
	}
	return false
}
