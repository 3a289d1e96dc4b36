package main

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// TestPoliteScraper runs the scraper's Ginkgo specs (main_test.go) under go test.
func TestPoliteScraper(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "polite-scraper")
}
