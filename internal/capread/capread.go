// Package capread reads at most a given number of bytes of a stream and then fails, if the
// stream has more, with an error of the caller's choosing. A parser that stops at its size cap
// thus learns it was cut, instead of taking the cap for the end of the document — what
// io.LimitReader, which answers io.EOF at its limit, cannot tell it.
package capread

import "io"

// Reader passes at most the limit given to [New] of its source. Its errors are sticky: a
// failure seen while sniffing a document's first bytes is seen again while parsing it.
type Reader struct {
	r        io.Reader
	left     int64
	n        int64
	err      error
	tooLarge func(read int64) error
}

// New returns a Reader of at most limit bytes of r. Reading past the limit, when r has another
// byte, fails with tooLarge(limit); when r ends exactly at the limit, with io.EOF.
func New(r io.Reader, limit int64, tooLarge func(read int64) error) *Reader {
	return &Reader{r: r, left: limit, tooLarge: tooLarge}
}

// N returns the bytes passed on so far.
func (c *Reader) N() int64 { return c.n }

func (c *Reader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.left <= 0 {
		var one [1]byte
		if n, _ := io.ReadFull(c.r, one[:]); n > 0 {
			c.err = c.tooLarge(c.n)
		} else {
			c.err = io.EOF
		}
		return 0, c.err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.left -= int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}
