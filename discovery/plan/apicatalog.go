package plan

// This file decides what the planner takes from an API catalog (RFC 9727): the APIs it names
// and the documentation pages it links.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

// Limits of one API catalog.
const (
	maxCatalogBytes = 1 << 20 // a catalog lists APIs, not pages; a megabyte is hundreds of them
	maxCatalogAPIs  = 100     // APIs kept per catalog
)

// ErrNotCatalog is wrapped by the error of an API catalog read when the body is not a linkset in
// JSON (RFC 9264 §4.2), the one form of API catalog the planner reads. The catalog is then only
// recorded, by its URL.
var ErrNotCatalog = errors.New("not an API catalog in linkset JSON")

// catalog is what an API catalog lists.
type catalog struct {
	// APIs are the APIs the catalog names, absolute, in catalog order: the anchor of each entry
	// that describes an API (service-desc, service-doc, service-meta; RFC 9727 §4.1) and each
	// "item" target (RFC 9727 §4.2). At most 100.
	APIs []string
	// Docs are the service-doc targets (RFC 8631) served as HTML: documentation pages a crawler
	// can read like any other page.
	Docs []*url.URL
}

// parseAPICatalog reads an API catalog fetched from catalogURL with the response's Content-Type
// (RFC 9727 §2 says application/linkset+json; any type but HTML is read as JSON, since servers
// label static files loosely). It reads at most 1 MiB.
func parseAPICatalog(body io.Reader, catalogURL *url.URL, contentType string) (*catalog, error) {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return nil, fmt.Errorf("API catalog %s: %w: served as %s", catalogURL.Redacted(), ErrNotCatalog, mt)
	}
	var doc struct {
		Linkset []map[string]json.RawMessage `json:"linkset"`
	}
	if err := json.NewDecoder(io.LimitReader(body, maxCatalogBytes)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("API catalog %s: %w: %v", catalogURL.Redacted(), ErrNotCatalog, err)
	}
	type target struct {
		Href string `json:"href"`
		Type string `json:"type"`
	}
	resolve, err := discovered.NewFilter(catalogURL.String())
	if err != nil {
		return nil, fmt.Errorf("API catalog %s: %w", catalogURL.Redacted(), err)
	}
	c := &catalog{}
	seen := map[string]bool{}
	addAPI := func(ref string) {
		u, err := resolve.Clean(ref)
		if err != nil || len(c.APIs) >= maxCatalogAPIs || seen[u.String()] {
			return
		}
		seen[u.String()] = true
		c.APIs = append(c.APIs, u.String())
	}
	for _, entry := range doc.Linkset {
		var anchor string
		if raw, ok := entry["anchor"]; ok {
			_ = json.Unmarshal(raw, &anchor) // a malformed anchor only loses that entry's API
		}
		for _, rel := range []string{"item", "service-desc", "service-doc", "service-meta"} {
			var targets []target
			if raw, ok := entry[rel]; !ok || json.Unmarshal(raw, &targets) != nil {
				continue
			}
			if rel == "item" {
				for _, t := range targets {
					addAPI(t.Href)
				}
				continue
			}
			if anchor != "" {
				addAPI(anchor)
			}
			if rel != "service-doc" {
				continue
			}
			for _, t := range targets {
				if mt, _, _ := mime.ParseMediaType(t.Type); t.Type != "" && mt != "text/html" {
					continue
				}
				if u, err := resolve.Clean(t.Href); err == nil && len(c.Docs) < maxCatalogAPIs {
					c.Docs = append(c.Docs, u)
				}
			}
		}
	}
	return c, nil
}
