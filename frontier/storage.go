package frontier

// This file decides what the frontier asks of a store of URLs, so that memory and a shared store
// such as Redis are interchangeable.

import "time"

// Entry is one URL of the crawl and how it came to be there.
type Entry struct {
	// URL is an absolute http(s) URL. [Frontier.Push] normalises it (see [Frontier.Push]) before
	// storing it, and hands it out in that form.
	URL string
	// Depth is the URL's distance from the start: start URLs, and URLs a site lists for machines
	// (sitemaps, llms.txt, feeds, APIs), are 1; a link on a depth-d page is d+1.
	Depth int
	// Via says how the URL was found: one of the Via constants below, or another short word.
	Via string
	// LastMod is when the source that listed the URL says it last changed (a sitemap's
	// <lastmod>, a feed entry's updated time, a WordPress modified_gmt); the zero time when it
	// said nothing. Storage keeps it to the second.
	LastMod time.Time
}

// The Via values the project uses: how a URL was found ("found_via" in the crawl's output). A
// document and the URLs it lists have different Vias: a sitemap named in robots.txt is
// ViaRobotsSitemap, the pages it lists ViaSitemap.
const (
	ViaStart         = "start"          // a start URL the caller gave
	ViaRobots        = "robots"         // /robots.txt itself (RFC 9309)
	ViaRobotsSitemap = "robots-sitemap" // a sitemap file named by a Sitemap line of robots.txt
	ViaSitemapIndex  = "sitemap-index"  // a sitemap file listed by a sitemap index
	ViaConvention    = "convention"     // a document tried by its conventional name: /sitemap.xml, /llms.txt, /llms-full.txt
	ViaSitemap       = "sitemap"        // a page listed by a sitemap file
	ViaLLMs          = "llms"           // a URL listed by llms.txt (llms-full.txt too, when llms.txt links it)
	ViaAlternate     = "alternate"      // a feed or a page representation a page advertised with rel=alternate
	ViaFeed          = "feed"           // a page listed by an RSS, Atom or JSON feed
	ViaAPI           = "api"            // an API document a page advertised: WordPress REST listings, an API catalog (RFC 9727)
	ViaWPRest        = "wp-rest"        // a page listed by the WordPress REST API
	ViaAPICatalog    = "api-catalog"    // an API an API catalog lists
	ViaLink          = "link"           // a link of an HTML page: <a>/<area>, or <link rel=sitemap>
)

// Admission is what became of a URL offered to the frontier.
type Admission int

const (
	// Queued: the URL waits in its origin's queue.
	Queued Admission = iota
	// Duplicate: the URL was queued before in this crawl (it may be waiting, in progress or done).
	Duplicate
	// Dropped: the origin's queue already held its limit; the URL is not kept, and the drop is
	// counted in [OriginStats.Dropped]. A dropped URL is not remembered, so it may be offered
	// (and counted) again.
	Dropped
)

func (a Admission) String() string {
	switch a {
	case Queued:
		return "queued"
	case Duplicate:
		return "duplicate"
	case Dropped:
		return "dropped"
	}
	return "unknown"
}

// Storage keeps the frontier's URLs: one first-in-first-out queue per origin (a budget key,
// "host" or "host:port"), the record of every URL accepted in this crawl, and the entries handed
// out and not yet acknowledged. The frontier decides which origin goes next; the storage decides
// nothing but de-duplication and the queue limit. [Memory] is the in-process implementation.
//
// The interface follows the shape of Colly's queue.Storage (Init, AddRequest, GetRequest,
// QueueSize) with the origin made explicit and an acknowledgement added, so that a shared store
// can implement it with per-origin queues: in Redis, a list per origin, a set of origins with
// waiting entries, SET NX (or SADD) on the URL's key for de-duplication, and a sorted set of
// taken entries scored by their lease deadline. Every method must be safe for concurrent use,
// by several frontiers in several processes when the store is shared, and must not block on
// anything but the store itself.
type Storage interface {
	// Init prepares the store. [New] calls it once, before any other method. A shared store
	// connects here and keeps what is already queued: a crawl resumes from it.
	Init() error
	// AddRequest appends e to the queue of origin key, unless e.URL was accepted before in this
	// crawl (Duplicate) or the queue already holds limit entries (Dropped; limit > 0). The check
	// and the append are one atomic step: two concurrent calls with one URL queue it once. A
	// dropped URL is not recorded as seen. e.URL is already normalised; implementations compare
	// it byte for byte (or by a hash of it, accepting the collision rate they document).
	AddRequest(key string, e Entry, limit int) (Admission, error)
	// GetRequest removes the oldest entry of key's queue and holds it as taken until Ack.
	// ok is false when the queue is empty. A shared store gives each taken entry a lease: an
	// entry taken and not acknowledged within it (its process died) goes back to the head of its
	// queue without passing the de-duplication check again, so a URL is never lost to a crash.
	GetRequest(key string) (e Entry, ok bool, err error)
	// Ack says that a taken entry is finished — fetched, refused or reported — so it is never
	// handed out again. Acknowledging an entry twice, or one that was never taken, does nothing.
	Ack(key string, e Entry) error
	// QueueSize returns the number of entries waiting in key's queue; taken entries do not count.
	QueueSize(key string) (int, error)
	// Origins returns the keys whose queues are not empty, in any order. The frontier reads it
	// before it declares a crawl finished, so that entries queued by another process, or left by
	// an earlier run, are not overlooked.
	Origins() ([]string, error)
}

// SharedStorage is a [Storage] several processes take from at once. Before the frontier declares
// the crawl over it asks Taken: while another process holds URLs it has not acknowledged, the
// crawl is not over here either — their pages may bring links, and if that process died its URLs
// come back to the queue when their leases expire. The frontier then looks again every
// [SharedRecheck].
type SharedStorage interface {
	Storage
	// Taken returns the number of entries taken and not yet acknowledged, by every process.
	Taken() (int, error)
}
