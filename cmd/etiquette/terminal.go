package main

// This file decides what of a server's text may reach the terminal.

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// terminalSafe returns s with every character a terminal could act on made visible: C0 controls
// but the newline, DEL, C1 controls, the bidirectional controls that reorder a line (Unicode
// UAX #9) and invalid UTF-8, as \xNN or \uNNNN. Everything the CLI prints that a server chose —
// a status reason, a header, a URL, a robots.txt line, a body quoted in an error — passes
// through it, so an answer cannot retitle the window, clear the screen or forge a line.
func terminalSafe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteByte('\n')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0, isBidiControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether s holds anything terminalSafe changes; plain ASCII text is the
// common case and is returned as it is.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n') || c >= 0x7f {
			return true
		}
	}
	return false
}

func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
