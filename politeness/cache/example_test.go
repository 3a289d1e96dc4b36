package cache_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/politeness/cache"
)

// A crawler's cache: a disk store several processes may share, a one-hour minimum revisit
// interval, and stale copies served for up to a day when the origin fails.
func ExampleNew() {
	dir, err := cache.DefaultDir()
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := cache.NewDiskStore(dir, cache.DiskOptions{MaxBytes: 2 << 30})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := cache.New(http.DefaultTransport, store, cache.Options{
		MinRevisit:   time.Hour,
		StaleIfError: 24 * time.Hour,
	})
	client := &http.Client{Transport: t}
	resp, err := client.Get("https://example.org/")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	fmt.Println(cache.StatusOf(resp), t.Stats().BytesSaved)
}
