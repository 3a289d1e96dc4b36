package etiquette_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// TestEtiquette runs the behavioural specs: real Colly collectors and real clients crawling
// httptest sites through the door, with the server side recording what an operator would see.
func TestEtiquette(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "etiquette behaviour")
}
