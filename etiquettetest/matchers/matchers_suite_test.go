package matchers_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// TestMatchers runs the specs that prove every matcher can pass and can fail: a polite crawl
// through the real door keeps each rule, a deliberately impolite client breaks each one.
func TestMatchers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "etiquettetest matchers")
}
