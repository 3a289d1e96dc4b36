package main

import (
	"github.com/politecrawl/etiquette/politeness/cache"
)

// openCacheStore opens the crawl's disk cache: dir, or the user cache directory's etiquette
// folder when dir is empty. An unusable directory is a usage error (exit 2).
func openCacheStore(dir string) (cache.Store, error) {
	if dir == "" {
		d, err := cache.DefaultDir()
		if err != nil {
			return nil, usagef("%v; or pass --cache-dir DIR or --no-cache", err)
		}
		dir = d
	}
	s, err := cache.NewDiskStore(dir, cache.DiskOptions{})
	if err != nil {
		return nil, usagef("--cache-dir %s: %v", dir, err)
	}
	return s, nil
}
