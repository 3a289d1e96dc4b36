package feeds

// This file cuts a JSON Feed into its items as it streams in, with encoding/json's tokens: gofeed
// v1.4.2 reads a JSON Feed whole (json.Unmarshal of the full body).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonItems calls each with every element of the top-level "items" array, as a one-item JSON
// Feed. Other members are skipped value by value. each gets nil for an item over maxItem bytes.
func jsonItems(r io.Reader, each func(doc []byte) error) error {
	d := json.NewDecoder(r)
	if tok, err := d.Token(); err != nil {
		return jsonError(d, err)
	} else if tok != json.Delim('{') {
		return fmt.Errorf("%w: the JSON is not an object", ErrBroken)
	}
	var doc []byte
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return jsonError(d, err)
		}
		if key != "items" {
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return jsonError(d, err)
			}
			continue
		}
		if tok, err := d.Token(); err != nil {
			return jsonError(d, err)
		} else if tok != json.Delim('[') {
			// Not a list of items: gofeed would reject the feed; there is nothing to read.
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return jsonError(d, err)
			}
			continue
		}
		for d.More() {
			var item json.RawMessage
			if err := d.Decode(&item); err != nil {
				return jsonError(d, err)
			}
			if len(item) > maxItem {
				err = each(nil)
			} else {
				doc = append(append(append(doc[:0], `{"version":"https://jsonfeed.org/version/1.1","items":[`...), item...), "]}"...)
				err = each(doc)
			}
			if err != nil {
				return err
			}
		}
		if _, err := d.Token(); err != nil { // ']'
			return jsonError(d, err)
		}
	}
	if _, err := d.Token(); err != nil { // '}'
		return jsonError(d, err)
	}
	return nil
}

// jsonError turns an error out of the decoder into one of the package's sentinels.
func jsonError(d *json.Decoder, err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: it ends early, at byte %d", ErrBroken, d.InputOffset())
	case errors.As(err, &syn):
		return fmt.Errorf("%w: byte %d: %v", ErrBroken, syn.Offset, err)
	case errors.Is(err, ErrTooLarge):
		return err
	default:
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return fmt.Errorf("%w: %v", ErrBroken, err)
		}
		return readError(err)
	}
}
