//go:build tools

// Package etiquette pins dependencies that later work builds on (Redis scale-out, sitemaps, feeds),
// so that go mod tidy keeps the versions DEVELOPERS.md names.
package etiquette

import (
	_ "github.com/go-redis/redis_rate/v10"
	_ "github.com/mmcdole/gofeed"
	_ "github.com/oxffaa/gopher-parse-sitemap"
	_ "github.com/redis/go-redis/v9"
)
