package cache

import (
	"bytes"
	"net/http"
	"testing"
)

// FuzzRecord feeds arbitrary bytes to the record decoder the disk store and the httpcache adapter
// use: it must reject or accept, never panic, and an accepted record must be self-consistent.
func FuzzRecord(f *testing.F) {
	meta, _ := encodeMeta("k", &Entry{Status: 200, Header: http.Header{"A": {"b"}}})
	good := append([]byte("body"), meta...)
	good = append(good, encodeTrailer(4, crc32c([]byte("body")), meta)...)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, trailerLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, body, err := decodeRecord(b, "k")
		if err != nil {
			return
		}
		if e.Key != "k" || e.Size != int64(len(body)) {
			t.Fatalf("accepted an inconsistent record: key %q size %d body %d", e.Key, e.Size, len(body))
		}
	})
}
