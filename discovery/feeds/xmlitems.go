package feeds

// This file cuts an RSS or Atom feed into its items as it streams in. It is hand-written over
// encoding/xml tokens because gofeed v1.4.2 offers no way to receive items one at a time (its
// item parsers are unexported and Parse returns the whole feed).

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"golang.org/x/net/html/charset"
)

// Bounds of what one feed holds in memory while it streams.
const (
	maxItem = 1 << 20   // bytes of one item; a larger item is dropped (Dropped.TooLong)
	maxRun  = 256 << 10 // bytes between two '<' or '>'; the rest of a longer run is skipped
)

// declaration finds the encoding an XML declaration names.
var declaration = regexp.MustCompile(`^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']`)

// declaredUTF8 returns the body transcoded to UTF-8 from the encoding its XML declaration names
// (head is the body's start), so that the recorded items need no declaration of their own.
func declaredUTF8(br *bufio.Reader, head []byte) io.Reader {
	head = []byte(strings.TrimPrefix(string(head), "\xef\xbb\xbf"))
	m := declaration.FindSubmatch(head)
	if m == nil {
		return br
	}
	enc, name := charset.Lookup(string(m[1]))
	if enc == nil || name == "utf-8" {
		return br
	}
	return enc.NewDecoder().Reader(br)
}

// xmlItems calls each with every item of an RSS (or RDF) feed and every entry of an Atom feed, in
// feed order, as a standalone one-item feed: the root's start tag (with its namespace
// declarations and xml:base), a channel for RSS, the item's bytes as sent. each gets nil for an
// item over maxItem bytes. An error from each stops the stream and is returned.
func xmlItems(r io.Reader, each func(doc []byte) error) error {
	rec := &recorder{br: bufio.NewReader(r)}
	d := xml.NewDecoder(rec)
	d.Strict = false // unknown entities stay literal text, attributes may lack quotes
	d.Entity = xml.HTMLEntity
	// The body is UTF-8 already (declaredUTF8); the declaration must not transcode it twice.
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }

	var (
		root      []byte // the root's start tag as sent
		open      []byte // what comes between the root's start tag and the item
		close     string // what follows the item
		itemName  string
		depth     int
		itemDepth = -1
		itemStart int64
		doc       []byte
	)
	for {
		if itemDepth < 0 {
			rec.dropBefore(d.InputOffset())
		}
		start := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			if root == nil {
				return fmt.Errorf("%w: no root element", ErrBroken)
			}
			return nil
		}
		if err != nil {
			return xmlError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case depth == 0 && root == nil:
				root = append([]byte(nil), rec.bytes(start, d.InputOffset())...)
				qname := qualifiedName(root)
				itemName, open, close = "item", nil, "</"+qname+">"
				if strings.EqualFold(t.Name.Local, "feed") {
					itemName = "entry"
				} else if strings.EqualFold(t.Name.Local, "rss") {
					open, close = []byte("<channel>"), "</channel>"+close
				}
			case itemDepth < 0 && depth >= 1 && depth <= 2 && t.Name.Local == itemName:
				itemDepth, itemStart = depth, start
			}
			depth++
		case xml.EndElement:
			depth--
			if depth == itemDepth {
				itemDepth = -1
				if rec.over {
					err = each(nil)
				} else {
					doc = append(append(append(append(doc[:0], root...), open...), rec.bytes(itemStart, d.InputOffset())...), close...)
					err = each(doc)
				}
				rec.dropBefore(d.InputOffset())
				if err != nil {
					return err
				}
			}
		}
	}
}

// qualifiedName is the element name of a start tag as sent ("rss", "rdf:RDF").
func qualifiedName(tag []byte) string {
	s := strings.TrimPrefix(string(tag), "<")
	if i := strings.IndexAny(s, " \t\r\n/>"); i >= 0 {
		s = s[:i]
	}
	return s
}

// xmlError turns an error out of the decoder into one of the package's sentinels.
func xmlError(err error) error {
	var syn *xml.SyntaxError
	switch {
	case errors.As(err, &syn) && syn.Msg == "unexpected EOF":
		return fmt.Errorf("%w: it ends early, at line %d", ErrBroken, syn.Line)
	case errors.As(err, &syn):
		return fmt.Errorf("%w: line %d: %s", ErrBroken, syn.Line, syn.Msg)
	default:
		return readError(err)
	}
}

// recorder is the decoder's input: it keeps the bytes the decoder read since the last call to
// dropBefore (at most maxItem of them), drops control characters XML forbids and cuts runs of
// text, so that neither it nor the decoder holds more than one item and one run at a time.
type recorder struct {
	br   *bufio.Reader
	buf  []byte
	base int64 // offset of buf[0] in what the decoder was given
	n    int64 // bytes given to the decoder
	over bool  // bytes were given but not kept since the last dropBefore
	run  int
}

func (r *recorder) ReadByte() (byte, error) {
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch {
		case b < 0x20 && b != '\t' && b != '\n' && b != '\r':
			continue // XML 1.0 §2.2 forbids them; gofeed drops them too
		case b == '<' || b == '>':
			r.run = 0
		default:
			if r.run++; r.run > maxRun {
				continue
			}
		}
		r.n++
		if len(r.buf) < maxItem {
			r.buf = append(r.buf, b)
		} else {
			r.over = true
		}
		return b, nil
	}
}

// Read makes the recorder an io.Reader; the decoder uses ReadByte.
func (r *recorder) Read(p []byte) (int, error) {
	for i := range p {
		b, err := r.ReadByte()
		if err != nil {
			return i, err
		}
		p[i] = b
	}
	return len(p), nil
}

// dropBefore forgets the bytes before offset off.
func (r *recorder) dropBefore(off int64) {
	if r.over {
		r.buf, r.base, r.over = r.buf[:0], r.n, false
		return
	}
	if k := int(off - r.base); k > 0 && k <= len(r.buf) {
		r.buf = r.buf[:copy(r.buf, r.buf[k:])]
		r.base = off
	}
}

// bytes returns the kept bytes between offsets from and to.
func (r *recorder) bytes(from, to int64) []byte {
	i, j := int(from-r.base), int(to-r.base)
	if i < 0 || j > len(r.buf) || i > j {
		return nil
	}
	return r.buf[i:j]
}
