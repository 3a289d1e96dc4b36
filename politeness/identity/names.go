package identity

import "strings"

// nameKind is what classifyName found a bot name to be.
type nameKind int

const (
	ownName      nameKind = iota // a name of its own: fine
	techName                     // an HTTP library, tool, language or crawler framework
	browserName                  // a web browser or browser engine
	genericOnly                  // nothing but generic words such as Bot or Crawler
	otherCrawler                 // the name of a well-known crawler run by someone else
)

// otherCrawlers maps normalised names of well-known crawlers to who runs them. Sending one of
// these names impersonates that crawler: sites would apply its robots.txt group (and, where they
// mistakenly trust the User-Agent, its allowances) to us.
var otherCrawlers = map[string]string{
	"googlebot": "Google", "googleother": "Google", "googleextended": "Google",
	"googleinspectiontool": "Google", "adsbotgoogle": "Google", "mediapartnersgoogle": "Google",
	"storebotgoogle": "Google", "feedfetchergoogle": "Google", "apisgoogle": "Google",
	"bingbot": "Microsoft", "msnbot": "Microsoft", "adidxbot": "Microsoft", "bingpreview": "Microsoft",
	"slurp": "Yahoo", "duckduckbot": "DuckDuckGo", "baiduspider": "Baidu", "yandexbot": "Yandex",
	"applebot": "Apple", "applebotextended": "Apple", "gptbot": "OpenAI", "chatgptuser": "OpenAI",
	"oaisearchbot": "OpenAI", "ccbot": "Common Crawl", "claudebot": "Anthropic",
	"claudeuser": "Anthropic", "claudeweb": "Anthropic", "anthropicai": "Anthropic",
	"perplexitybot": "Perplexity", "perplexityuser": "Perplexity",
	"facebookexternalhit": "Meta", "facebookbot": "Meta", "metaexternalagent": "Meta",
	"twitterbot": "X", "linkedinbot": "LinkedIn", "iaarchiver": "Alexa", "archiveorgbot": "the Internet Archive",
	"petalbot": "Huawei", "semrushbot": "Semrush", "ahrefsbot": "Ahrefs", "mjbot": "Majestic",
	"dotbot": "Moz", "seznambot": "Seznam", "amazonbot": "Amazon", "bytespider": "ByteDance",
	"exabot": "Exalead", "qwantify": "Qwant", "mojeekbot": "Mojeek", "sogouwebspider": "Sogou",
}

// impersonates reports whether name is, or begins with, the name of a well-known crawler run by
// someone else (Googlebot, Googlebot-Image, AdsBot-Google-Mobile), and who runs it. Longer names
// that merely contain one (MyGooglebotMonitor) are not matched.
func impersonates(name string) (string, bool) {
	n := ""
	for _, seg := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' }) {
		n += normalizeName(seg)
		if who, ok := otherCrawlers[n]; ok {
			return who, true
		}
	}
	return "", false
}

// techNames maps normalised names (see normalizeName) of HTTP libraries, tools, languages and
// crawler frameworks to a readable name. Most are what a library sends when nobody sets a
// User-Agent (Go-http-client, python-requests, curl, Java, okhttp, …); a crawler named after its
// tooling says nothing about who runs it. Deliberately short names that are also ordinary words
// (got, hyper, request) are left out to avoid rejecting real bot names.
var techNames = map[string]string{
	"curl": "curl", "libcurl": "curl", "wget": "GNU Wget",
	"python": "Python", "pythonrequests": "Python requests", "requests": "Python requests",
	"pythonurllib": "Python urllib", "urllib": "Python urllib", "httplib": "Python httplib",
	"aiohttp": "aiohttp", "httpx": "HTTPX", "pythonhttpx": "HTTPX", "scrapy": "Scrapy",
	"mechanize": "mechanize", "mechanicalsoup": "MechanicalSoup",
	"php": "PHP", "guzzle": "Guzzle", "guzzlehttp": "Guzzle",
	"java": "Java", "javahttpclient": "Java HttpClient", "httpclient": "an HttpClient library",
	"apachehttpclient": "Apache HttpClient", "okhttp": "OkHttp", "jsoup": "jsoup",
	"nutch": "Apache Nutch", "apachenutch": "Apache Nutch", "heritrix": "Heritrix",
	"stormcrawler": "StormCrawler", "crawlee": "Crawlee",
	"go": "Go", "golang": "Go", "gohttpclient": "Go's net/http", "colly": "Colly", "gocolly": "Colly",
	"node": "Node.js", "nodejs": "Node.js", "nodefetch": "node-fetch", "undici": "undici",
	"axios": "axios", "superagent": "superagent", "puppeteer": "Puppeteer",
	"playwright": "Playwright", "selenium": "Selenium", "phantomjs": "PhantomJS",
	"libwwwperl": "libwww-perl", "lwp": "libwww-perl", "lwpsimple": "libwww-perl", "perl": "Perl",
	"ruby": "Ruby", "faraday": "Faraday", "restclient": "rest-client",
	"rust": "Rust", "reqwest": "reqwest",
	"dotnet": ".NET", "winhttp": "WinHTTP", "wininet": "WinINet", "powershell": "PowerShell",
	"cfnetwork": "Apple CFNetwork", "dalvik": "Android Dalvik", "dart": "Dart",
	"httpie": "HTTPie", "postmanruntime": "Postman", "postman": "Postman", "insomnia": "Insomnia",
	"httrack": "HTTrack", "http": "HTTP", "https": "HTTP",
}

// browserNames are product names of web browsers and their engines (lower case). One of these as
// a top-level product, or as the bot's name, makes a User-Agent pass for a browser.
var browserNames = map[string]bool{
	"mozilla": true, "applewebkit": true, "webkit": true, "gecko": true, "khtml": true,
	"chrome": true, "chromium": true, "headlesschrome": true, "crios": true, "safari": true,
	"firefox": true, "fxios": true, "edg": true, "edge": true, "edga": true, "edgios": true,
	"opr": true, "opera": true, "presto": true, "trident": true, "msie": true,
	"version": true, "mobile": true, "samsungbrowser": true, "yabrowser": true,
	"vivaldi": true, "brave": true, "ucbrowser": true,
}

// genericWords say "this is a bot" without saying which one. They are stripped from either end
// of a name before it is compared with techNames (so colly-bot and ScrapyCrawler are technology
// names); a name that is nothing but these words is generic. Longer words come first so that
// "robot" is stripped whole rather than as "bot".
var genericWords = []string{
	"crawler", "scraper", "harvester", "archiver", "fetcher", "indexer", "checker", "monitor",
	"spider", "robot", "agent", "client", "scrape", "crawl", "fetch", "check", "test",
	"user", "http", "web", "www", "bot", "the", "my",
}

// normalizeName lower-cases a name and drops separators and digits, so that python-requests,
// Python_Requests and PythonRequests2 compare equal.
func normalizeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case 'A' <= ch && ch <= 'Z':
			b.WriteByte(ch + 'a' - 'A')
		case 'a' <= ch && ch <= 'z':
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// classifyName decides whether a bot name is another organisation's crawler, a technology name,
// a browser name, nothing but generic words, or a name of its own. For the first two it also
// returns who runs the crawler or a readable name of the technology. Matching is case-insensitive and ignores '-', '_', '.', digits and generic
// words at either end: curl, CURL, curl-bot, PythonRequestsCrawler and Go-http-client are all
// technology names; LegalCheck and ExampleBot are names of their own.
func classifyName(name string) (nameKind, string) {
	if who, ok := impersonates(name); ok {
		return otherCrawler, who
	}
	n := normalizeName(name)
	first := true
	for {
		if what, ok := techNames[n]; ok {
			return techName, what
		}
		// A browser word is a disguise only as the whole name: "Safari" is, "SafariWatch" need not be.
		if first && browserNames[n] {
			return browserName, ""
		}
		first = false
		stripped := stripGeneric(n)
		if stripped == n {
			break
		}
		n = stripped
	}
	if n == "" {
		return genericOnly, ""
	}
	return ownName, ""
}

// stripGeneric removes one generic word from the end of n, or else from its start.
func stripGeneric(n string) string {
	for _, w := range genericWords {
		if strings.HasSuffix(n, w) {
			return n[:len(n)-len(w)]
		}
	}
	for _, w := range genericWords {
		if strings.HasPrefix(n, w) {
			return n[len(w):]
		}
	}
	return n
}
