// This file decides what a typical site's documents look like: HTML pages, sitemaps, an RSS
// feed, llms.txt, a WordPress REST API listing, and the cookies real sites set.

package etiquettetest

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
)

// HTMLPage is a 200 HTML page with a title and one <a href> per link; links may be paths or
// absolute URLs of other origins. Add <link rel="alternate"> with [Answer.Alternate].
func HTMLPage(title string, links ...string) Answer {
	return Answer{contentType: "text/html; charset=utf-8", page: &htmlPage{title: title, links: links}}
}

// sitemapNS is the sitemaps.org namespace of sitemaps and sitemap indexes.
const sitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"

// Sitemap is a 200 sitemap (sitemaps.org protocol) listing urls, which should be absolute.
// Serve it gzipped with [Answer.Gzipped].
func Sitemap(urls ...string) Answer { return sitemapAnswer("urlset", "url", urls) }

// SitemapIndex is a 200 sitemap index listing sitemaps, which should be absolute URLs.
func SitemapIndex(sitemaps ...string) Answer {
	return sitemapAnswer("sitemapindex", "sitemap", sitemaps)
}

// sitemapAnswer is a sitemaps.org document: root holding one entry element per loc.
func sitemapAnswer(root, entry string, locs []string) Answer {
	type loc struct {
		XMLName xml.Name
		Loc     string `xml:"loc"`
	}
	doc := struct {
		XMLName xml.Name
		NS      string `xml:"xmlns,attr"`
		Entries []loc
	}{XMLName: xml.Name{Local: root}, NS: sitemapNS}
	for _, l := range locs {
		doc.Entries = append(doc.Entries, loc{XMLName: xml.Name{Local: entry}, Loc: l})
	}
	return xmlAnswer("application/xml", doc)
}

// RSS is a 200 RSS 2.0 feed titled title with one item per link.
func RSS(title string, links ...string) Answer {
	type item struct {
		Title string `xml:"title"`
		Link  string `xml:"link"`
		GUID  string `xml:"guid"`
	}
	doc := struct {
		XMLName xml.Name `xml:"rss"`
		Version string   `xml:"version,attr"`
		Title   string   `xml:"channel>title"`
		Link    string   `xml:"channel>link"`
		Desc    string   `xml:"channel>description"`
		Items   []item   `xml:"channel>item"`
	}{Version: "2.0", Title: title, Link: "/", Desc: title}
	for _, l := range links {
		doc.Items = append(doc.Items, item{Title: l, Link: l, GUID: l})
	}
	return xmlAnswer("application/rss+xml", doc)
}

func xmlAnswer(contentType string, doc any) Answer {
	// Marshalling fixed struct types of strings cannot fail.
	b, _ := xml.MarshalIndent(doc, "", "  ")
	return Answer{contentType: contentType, body: append([]byte(xml.Header), b...)}
}

// LLMsTxt is a 200 llms.txt (llmstxt.org): a Markdown title and a list of links.
func LLMsTxt(title string, links ...string) Answer {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n> A site for testing polite crawlers.\n\n## Pages\n\n", title)
	for _, l := range links {
		fmt.Fprintf(&b, "- [%s](%s)\n", l, l)
	}
	return Text(b.String())
}

// WordPressPosts is a 200 WordPress REST API post listing (what /wp-json/wp/v2/posts answers):
// one post per link, with X-WP-Total and X-WP-TotalPages as WordPress sends them.
func WordPressPosts(links ...string) Answer {
	type rendered struct {
		Rendered string `json:"rendered"`
	}
	type post struct {
		ID    int      `json:"id"`
		Link  string   `json:"link"`
		Title rendered `json:"title"`
	}
	posts := make([]post, 0, len(links))
	for i, l := range links {
		posts = append(posts, post{ID: i + 1, Link: l, Title: rendered{l}})
	}
	// Marshalling fixed struct types of strings cannot fail.
	b, _ := json.Marshal(posts)
	a := Answer{contentType: "application/json; charset=UTF-8", body: b}
	return a.Header("X-WP-Total", fmt.Sprint(len(posts))).Header("X-WP-TotalPages", "1")
}

// SessionCookie is an anonymous server session, as PHP sets it.
func SessionCookie() *http.Cookie {
	return &http.Cookie{Name: "PHPSESSID", Value: "k2v9d8s7f6", Path: "/", HttpOnly: true}
}

// TrackingCookie is a Google Analytics client ID, valid for two years.
func TrackingCookie() *http.Cookie {
	return &http.Cookie{Name: "_ga", Value: "GA1.1.1234567890.1700000000", Path: "/", MaxAge: 63072000}
}

// ConsentCookie is a consent manager's record of a choice (Cookiebot's CookieConsent).
func ConsentCookie() *http.Cookie {
	return &http.Cookie{Name: "CookieConsent", Value: "{necessary:true,marketing:true}", Path: "/", MaxAge: 31536000}
}
