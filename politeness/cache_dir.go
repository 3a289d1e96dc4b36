package politeness

// This file lets a caller name the directory of the door's disk cache without opening a second
// store on a directory the process already uses.

import (
	"log/slog"

	"github.com/politecrawl/etiquette/internal/quietlog"
	"github.com/politecrawl/etiquette/politeness/cache"
)

// DiskCache returns the process-wide disk store of dir, opening (and creating) it on first use,
// for Policy.CacheStore: every door given the store of one directory shares its index and segment
// file, as the doors of the default directory do. logger (nil: warnings and errors only, on slog.Default()) reports damaged
// entries; the first caller of a directory sets it.
func DiskCache(dir string, logger *slog.Logger) (*cache.DiskStore, error) {
	return processDiskStore(dir, quietlog.Or(logger))
}
