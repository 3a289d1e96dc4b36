package sitemap

// This file decides which byte-level mistakes of real sitemaps are mended before the XML decoder
// sees them.

import (
	"bytes"
	"html"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/transform"
)

// maxRun is the longest run of bytes between two markup characters ('<' or '>') that is passed
// on; the rest of the run is cut. encoding/xml holds a whole text node in memory, so without a
// cut a file of one 50 MiB text node (a gzip bomb of spaces) would cost its size in heap. No URL
// that long is kept anyway (discovered.MaxLen).
const maxRun = 64 << 10

// maxEntity bounds the name of an entity reference looked at ("&CounterClockwiseContourIntegral;"
// is the longest HTML one).
const maxEntity = 40

// Repairs counts the mends made to one file's bytes.
type Repairs struct {
	Ampersands int // '&' that started no valid reference, escaped as "&amp;"
	Entities   int // HTML entities ("&nbsp;") replaced by character references
	Controls   int // control characters XML forbids, removed
	BadUTF8    int // bytes that are not UTF-8, replaced by U+FFFD
	CutRuns    int // runs longer than 64 KiB without markup, cut
	Priorities int // <priority> elements hidden from the parser
}

// repair is a transform.Transformer that mends the stream for gopher-parse-sitemap, which builds
// its own strict xml.Decoder and exposes none of its switches (Strict, Entity, CharsetReader), so
// leniency has to happen in the bytes. Input is meant to be UTF-8. CDATA sections pass unchanged,
// except for control characters, bytes that are not UTF-8 and overlong runs.
type repair struct {
	cdata   bool
	run     int  // bytes since the last '<' or '>'
	cutting bool // the current run passed maxRun
	Repairs
}

func (r *repair) Reset() { *r = repair{} }

var (
	cdataOpen  = []byte("<![CDATA[")
	cdataClose = []byte("]]>")
	escapedAmp = []byte("&amp;")
	// replacement stands for a byte that is not UTF-8, as a browser shows it.
	replacement = []byte(string(utf8.RuneError))

	// gopher decodes <priority> into a float32, and one value that is not a number ("high",
	// "0,5") aborts the whole file. The crawler does not use priority, so the element is renamed
	// and gopher skips it.
	openPriority         = []byte("<priority")
	closePriority        = []byte("</priority")
	renamedOpenPriority  = []byte("<ignored-priority")
	renamedClosePriority = []byte("</ignored-priority")
)

// cutShort reports whether rest may be the start of marker plus extra more bytes but ends too
// early to tell.
func cutShort(rest, marker []byte, extra int) bool {
	if len(rest) >= len(marker)+extra {
		return false
	}
	if len(rest) <= len(marker) {
		return bytes.HasPrefix(marker, rest)
	}
	return bytes.HasPrefix(rest, marker)
}

// isTag reports whether b starts with the tag opening name ("<priority") followed by the end of
// the name.
func isTag(b, name []byte) bool {
	if !bytes.HasPrefix(b, name) || len(b) == len(name) {
		return false
	}
	c := b[len(name)]
	return c == '>' || c == '/' || isSpace(c)
}

// Transform implements transform.Transformer.
func (r *repair) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		// Fast path: copy a stretch of bytes that need no decision.
		i := nSrc
		for i < len(src) && r.run+(i-nSrc) < maxRun {
			if c := src[i]; c < utf8.RuneSelf {
				if !r.plain(c) {
					break
				}
				i++
				continue
			}
			_, size := utf8.DecodeRune(src[i:])
			if size == 1 { // invalid, or cut by the end of src: decided below
				break
			}
			i += size
		}
		if i > nSrc {
			n := copy(dst[nDst:], src[nSrc:i])
			short := n < i-nSrc
			nDst += n
			nSrc += n
			r.run += n
			if short {
				return nDst, nSrc, transform.ErrShortDst
			}
			continue
		}
		c := src[nSrc]
		rest := src[nSrc:]
		switch {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			r.Controls++
			nSrc++
		case r.run >= maxRun && c != '<' && c != '>' && !(r.cdata && c == ']'):
			if !r.cutting {
				r.cutting = true
				r.CutRuns++
			}
			nSrc++
		case c >= utf8.RuneSelf:
			if !atEOF && !utf8.FullRune(rest) {
				return nDst, nSrc, transform.ErrShortSrc
			}
			if len(dst)-nDst < len(replacement) {
				return nDst, nSrc, transform.ErrShortDst
			}
			nDst += copy(dst[nDst:], replacement)
			nSrc++
			r.run += len(replacement)
			r.BadUTF8++
		case r.cdata && c == ']':
			if !atEOF && cutShort(rest, cdataClose, 0) {
				return nDst, nSrc, transform.ErrShortSrc
			}
			if bytes.HasPrefix(rest, cdataClose) {
				if len(dst)-nDst < len(cdataClose) {
					return nDst, nSrc, transform.ErrShortDst
				}
				nDst += copy(dst[nDst:], cdataClose)
				nSrc += len(cdataClose)
				r.cdata, r.run, r.cutting = false, 0, false
				continue
			}
			if nDst == len(dst) {
				return nDst, nSrc, transform.ErrShortDst
			}
			dst[nDst] = c
			nDst++
			nSrc++
			r.run++
		case c == '<':
			if !atEOF && (cutShort(rest, cdataOpen, 0) || cutShort(rest, openPriority, 1) || cutShort(rest, closePriority, 1)) {
				return nDst, nSrc, transform.ErrShortSrc
			}
			out, n := rest[:1], 1
			switch {
			case bytes.HasPrefix(rest, cdataOpen):
				out, n = cdataOpen, len(cdataOpen)
				r.cdata = true
			case isTag(rest, openPriority):
				out, n = renamedOpenPriority, len(openPriority)
				r.Priorities++
			case isTag(rest, closePriority):
				out, n = renamedClosePriority, len(closePriority)
			}
			if len(dst)-nDst < len(out) {
				return nDst, nSrc, transform.ErrShortDst
			}
			nDst += copy(dst[nDst:], out)
			nSrc += n
			r.run, r.cutting = 0, false
		case c == '>':
			if nDst == len(dst) {
				return nDst, nSrc, transform.ErrShortDst
			}
			dst[nDst] = c
			nDst++
			nSrc++
			r.run, r.cutting = 0, false
		default: // '&' outside CDATA
			out, used, short := r.reference(rest, atEOF)
			if short {
				return nDst, nSrc, transform.ErrShortSrc
			}
			if len(dst)-nDst < len(out) {
				return nDst, nSrc, transform.ErrShortDst
			}
			nDst += copy(dst[nDst:], out)
			nSrc += used
			r.run += len(out)
		}
	}
	return nDst, nSrc, nil
}

// plain reports whether c passes without a decision in the current state.
func (r *repair) plain(c byte) bool {
	if c < 0x20 {
		return c == '\t' || c == '\n' || c == '\r'
	}
	if r.cdata {
		return c != ']'
	}
	return c != '&' && c != '<' && c != '>'
}

// reference decides what to write for the '&' at the start of rest: the reference itself when
// XML knows it, a numeric character reference for an HTML entity, "&amp;" otherwise. It reports
// how many bytes of rest it used, or short when rest ends before the decision can be made.
func (r *repair) reference(rest []byte, atEOF bool) (out []byte, used int, short bool) {
	j := 1
	for j < len(rest) && j <= maxEntity && isRefByte(rest[j]) {
		j++
	}
	if j == len(rest) && j <= maxEntity && !atEOF {
		return nil, 0, true
	}
	if j < len(rest) && rest[j] == ';' && j > 1 {
		ref := rest[:j+1]
		name := rest[1:j]
		switch {
		case name[0] == '#':
			if validCharRef(name[1:]) {
				return ref, len(ref), false
			}
		case isXMLEntity(name):
			return ref, len(ref), false
		default:
			if s := html.UnescapeString(string(ref)); s != string(ref) && s[len(s)-1] != ';' {
				// A prefix match ("&notit;" read as "&not" + "it;") leaves the ';' in place; only a
				// full match is a real entity.
				r.Entities++
				var b []byte
				for _, ch := range s {
					b = append(b, "&#"...)
					b = strconv.AppendInt(b, int64(ch), 10)
					b = append(b, ';')
				}
				return b, len(ref), false
			}
		}
	}
	r.Ampersands++
	return escapedAmp, 1, false
}

func isRefByte(c byte) bool {
	return c == '#' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isXMLEntity(name []byte) bool {
	switch string(name) {
	case "amp", "lt", "gt", "quot", "apos":
		return true
	}
	return false
}

// validCharRef reports whether n ("160" or "xA0") names a character XML allows (XML 1.0 §2.2).
func validCharRef(n []byte) bool {
	base := 10
	if len(n) > 0 && (n[0] == 'x' || n[0] == 'X') {
		base, n = 16, n[1:]
	}
	v, err := strconv.ParseUint(string(n), base, 32)
	if err != nil {
		return false
	}
	c := rune(v)
	return c == '\t' || c == '\n' || c == '\r' ||
		c >= 0x20 && c <= 0xD7FF || c >= 0xE000 && c <= 0xFFFD || c >= 0x10000 && c <= utf8.MaxRune
}
