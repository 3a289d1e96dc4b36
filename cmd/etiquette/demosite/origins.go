// This file decides what each origin of the demo serves, and which of its answers carry
// validators, cookies, pauses and redirects.

package demosite

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// Published is the Last-Modified of every document of the demo site.
var Published = time.Date(2026, time.January, 15, 9, 0, 0, 0, time.UTC)

// ShopPause is the Retry-After of the shop's 429, and ArchivePause that of the archive's 503 on
// robots.txt: short, so the demo shows the pause without making anyone wait for it.
const (
	ShopPause    = 2 * time.Second
	ArchivePause = time.Second
)

// wordPressAPI is the link relation WordPress advertises its REST API with.
const wordPressAPI = "https://api.w.org/"

func (s *Site) buildBlog(b bases) error {
	o := s.Blog
	pages, err := serveFolder(o, "blog", b, func(p page, a etiquettetest.Answer) etiquettetest.Answer {
		if p.path == "/" {
			a = a.Alternate("application/rss+xml", "/feed/")
		}
		// WordPress sends the API's address both in the page head and as this header; the kit's
		// pages carry only rel=alternate links in their head, so the demo sends the header.
		return a.Header("Link", fmt.Sprintf("<%s/wp-json/>; rel=%q", o.URL, wordPressAPI)).
			SetCookie(etiquettetest.TrackingCookie()).SetCookie(etiquettetest.ConsentCookie())
	})
	if err != nil {
		return err
	}
	var posts, others []string
	for _, p := range pages {
		if strings.HasPrefix(p.path, "/2026/") {
			posts = append(posts, o.URL+p.path)
		} else {
			others = append(others, o.URL+p.path)
		}
	}
	validated(o, "/sitemap_index.xml", etiquettetest.SitemapIndex(o.URL+"/post-sitemap.xml.gz", o.URL+"/page-sitemap.xml"))
	validated(o, "/post-sitemap.xml.gz", etiquettetest.Sitemap(posts...).Gzipped())
	validated(o, "/page-sitemap.xml", etiquettetest.Sitemap(others...))
	validated(o, "/feed/", etiquettetest.RSS("The Polite Blog", posts...))
	validated(o, "/wp-json/wp/v2/posts", etiquettetest.WordPressPosts(posts...))
	return nil
}

func (s *Site) buildShop(b bases) error {
	o := s.Shop
	pages, err := serveFolder(o, "shop", b, func(_ page, a etiquettetest.Answer) etiquettetest.Answer {
		return a.SetCookie(etiquettetest.SessionCookie()).SetCookie(etiquettetest.TrackingCookie())
	})
	if err != nil {
		return err
	}
	o.Nth("/products", 1, etiquettetest.Status(http.StatusTooManyRequests).RetryAfter(ShopPause))
	// A permanent move may be reused for an hour: the second pass follows it from the cache.
	o.Serve("/help", etiquettetest.Redirect(http.StatusMovedPermanently, s.Docs.URL+"/guide").Header("Cache-Control", "max-age=3600"))
	validated(o, "/sitemap.xml", etiquettetest.Sitemap(urlsOf(o, pages)...))
	return nil
}

func (s *Site) buildDocs(b bases) error {
	o := s.Docs
	pages, err := serveFolder(o, "docs", b, nil)
	if err != nil {
		return err
	}
	validated(o, "/sitemap.xml", etiquettetest.Sitemap(urlsOf(o, pages)...))
	return nil
}

func (s *Site) buildArchive(b bases) error {
	o := s.Archive
	_, err := serveFolder(o, "archive", b, nil)
	o.Serve("/robots.txt", etiquettetest.Status(http.StatusServiceUnavailable).RetryAfter(ArchivePause))
	return err
}

// serveFolder serves the origin's content folder and returns its pages. Each page is served as
// HTML, linking its Markdown source with rel=alternate, and as that Markdown; decorate, when
// not nil, adds the origin's extras to each HTML answer. Each text file of the folder (robots.txt,
// llms.txt) is served at its name.
func serveFolder(o *etiquettetest.Origin, folder string, b bases, decorate func(page, etiquettetest.Answer) etiquettetest.Answer) ([]page, error) {
	pages, texts, err := contentOf(folder, b)
	if err != nil {
		return nil, err
	}
	for _, p := range pages {
		a := etiquettetest.HTMLPage(p.title, p.links...).Alternate("text/markdown", p.markdown)
		if decorate != nil {
			a = decorate(p, a)
		}
		validated(o, p.path, a, p.text)
		validated(o, p.markdown, etiquettetest.Text(string(p.text)), p.text)
	}
	for name, text := range texts {
		validated(o, "/"+name, etiquettetest.Text(string(text)), text)
	}
	return pages, nil
}

// validated serves a at path with an ETag, a Last-Modified and Cache-Control: no-cache, so a
// second crawl through a cache is answered 304: no-cache lets the cache store the answer but not
// reuse it without asking the site (RFC 9111 §5.2.2.4); without it, a Last-Modified weeks old
// would make the copy fresh for days by heuristic (§4.2.2) and the site would see nothing. The
// ETag is a hash of the path and of what the answer was made from.
func validated(o *etiquettetest.Origin, path string, a etiquettetest.Answer, made ...[]byte) {
	h := fnv.New64a()
	h.Write([]byte(path))
	for _, m := range made {
		h.Write(m)
	}
	o.Serve(path, a.ETag(fmt.Sprintf("%016x", h.Sum64())).LastModified(Published).Header("Cache-Control", "no-cache"))
}

func urlsOf(o *etiquettetest.Origin, pages []page) []string {
	urls := make([]string, 0, len(pages))
	for _, p := range pages {
		urls = append(urls, o.URL+p.path)
	}
	return urls
}
