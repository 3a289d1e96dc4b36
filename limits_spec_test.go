package etiquette_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

var _ = Describe("a site that serves a body larger than the crawler processes", func() {
	var s *etiquettetest.Origin

	BeforeEach(func() {
		s = newTestSite().NewOrigin().Robots(allowAll).
			Serve("/eleven-mib", etiquettetest.Text(strings.Repeat("y", 11<<20))).
			Serve("/big", etiquettetest.Text("<html>"+strings.Repeat("x", 5000)+"</html>").ContentType("text/html")).
			Otherwise(etiquettetest.HTMLPage("small"))
	})

	It("cuts the body at the kind's cap and reports it instead of passing on a silently truncated page", func() {
		p := isolatedPolicy(s.Addr())
		p.MaxBodyBytes = map[kind.Kind]int64{kind.HTML: 1000}
		p.Events = &events.Bus{}
		var truncated []events.Event
		p.Events.Subscribe(func(e events.Event) {
			if e.Type == events.Response && e.Truncated {
				truncated = append(truncated, e)
			}
		})
		c := colly.NewCollector()
		Expect(extensions.Polite(c, p)).To(Succeed())
		var got error
		c.OnError(func(_ *colly.Response, err error) { got = err })
		okPages := 0
		c.OnResponse(func(*colly.Response) { okPages++ })
		_ = c.Visit(s.URL + "/big")
		Expect(errors.Is(got, politeness.ErrBodyTooLarge)).To(BeTrue(), "got %v", got)
		Expect(got.Error()).To(ContainSubstring("MaxBodyBytes"))
		Expect(truncated).To(HaveLen(1))
		Expect(truncated[0].Bytes).To(BeEquivalentTo(1000))
		Expect(c.Visit(s.URL + "/small")).To(Succeed())
		Expect(okPages).To(Equal(1))
	})

	It("lets the door's cap govern, not Colly's silent 10 MiB cut", func() {
		p := isolatedPolicy(s.Addr())
		p.MaxBodyBytes = map[kind.Kind]int64{kind.HTML: 20 << 20}
		c := colly.NewCollector()
		Expect(extensions.Polite(c, p)).To(Succeed())
		got := 0
		c.OnResponse(func(r *colly.Response) { got = len(r.Body) })
		Expect(c.Visit(s.URL + "/eleven-mib")).To(Succeed())
		Expect(got).To(Equal(11<<20), "the whole body, beyond Colly's default MaxBodySize")
	})

	It("stops decompressing a gzip bomb at the cap", func() {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(make([]byte, 64<<20)) // 64 MiB of zeros: about 64 KiB on the wire
		Expect(zw.Close()).To(Succeed())
		s.Serve("/bomb", etiquettetest.Text(b.String()).ContentType("text/html").Header("Content-Encoding", "gzip"))
		door, err := politeness.NewDoor(isolatedPolicy(s.Addr()))
		Expect(err).NotTo(HaveOccurred())
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/bomb", nil)
		resp, err := door.Client().Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		Expect(errors.Is(err, politeness.ErrBodyTooLarge)).To(BeTrue(), "got %v after %d bytes", err, n)
		Expect(n).To(BeEquivalentTo(politeness.DefaultMaxBodyBytes(kind.HTML)))
	})
})
