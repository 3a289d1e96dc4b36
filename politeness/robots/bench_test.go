package robots

import (
	"fmt"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// largeRobots is a ~500 KiB robots.txt with thousands of rules, a tenth of them wildcards,
// in a FooBot group and a * group.
func largeRobots() string {
	var b strings.Builder
	b.WriteString("User-agent: FooBot\n")
	for i := 0; b.Len() < 250<<10; i++ {
		switch i % 10 {
		case 0:
			fmt.Fprintf(&b, "Disallow: /*?session=%d\n", i)
		case 1:
			fmt.Fprintf(&b, "Allow: /catalogue/section-%d/public/\n", i)
		default:
			fmt.Fprintf(&b, "Disallow: /catalogue/section-%d/item-%d/\n", i, i*7)
		}
	}
	b.WriteString("\nUser-agent: *\n")
	for i := 0; b.Len() < 500<<10; i++ {
		fmt.Fprintf(&b, "Disallow: /archive/%d/\n", i)
	}
	return b.String()
}

// typicalRobots is a 20-rule file of the kind most sites publish.
const typicalRobots = `# robots.txt
User-agent: *
Disallow: /wp-admin/
Allow: /wp-admin/admin-ajax.php
Disallow: /cart/
Disallow: /checkout/
Disallow: /my-account/
Disallow: /*?add-to-cart=*
Disallow: /*?orderby=
Disallow: /search
Disallow: /tmp/
Disallow: /private/
Disallow: /*.pdf$
Allow: /public/

User-agent: FooBot
Disallow: /cart/
Disallow: /checkout/
Disallow: /search
Disallow: /*?sessionid=
Disallow: /print/
Allow: /print/catalogue
Crawl-delay: 2

Sitemap: https://shop.example/sitemap.xml
`

func BenchmarkDecide(b *testing.B) {
	inputs := []struct {
		name, body, url string
	}{
		{"large", largeRobots(), "https://shop.example/catalogue/section-99999/item-3/page.html?colour=red"},
		{"typical", typicalRobots, "https://shop.example/products/shoes/red-sneaker.html?size=42"},
	}
	for _, in := range inputs {
		u := mustURL(b, in.url)
		b.Run(in.name+"/ours", func(b *testing.B) {
			f := Parse([]byte(in.body))
			b.ReportAllocs()
			for b.Loop() {
				if !f.Decide("FooBot", u).Allowed {
					b.Fatal("the benchmark URL must be allowed")
				}
			}
		})
		b.Run(in.name+"/temoto", func(b *testing.B) {
			data, err := robotstxt.FromString(in.body)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if !collyTest(data, "FooBot", u) {
					b.Fatal("the benchmark URL must be allowed")
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for _, in := range []struct{ name, body string }{{"large", largeRobots()}, {"typical", typicalRobots}} {
		body := []byte(in.body)
		b.Run(in.name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(body)
			}
		})
		b.Run(in.name+"/temoto", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := robotstxt.FromBytes(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
