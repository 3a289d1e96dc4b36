package extensions

// This file reads what Colly v2.3.0 and net/http keep unexported and Polite must see: the
// collector's HTTP client, its limit rules, and the names in a cookie jar. Each reader checks the
// layout by reflection and reports false when it is not the one Polite was built for; a spec
// pins it.

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"reflect"
	"sync"
	"unsafe"

	"github.com/gocolly/colly/v2"
)

// clientReader returns a function that reads c's unexported HTTP client. Colly v2.3.0 has no
// getter for it, and the door must notice when a setter replaced the transport. The layout is
// looked up by reflection once, here — it reports false when it is not the one Polite was built
// for — and the function reads the two pointers at their offsets, because the guard runs it on
// every Done and Err of every request's context. A spec pins the layout.
func clientReader(c *colly.Collector) (func() *http.Client, bool) {
	backend, ok := reflect.TypeFor[colly.Collector]().FieldByName("backend")
	if !ok || len(backend.Index) != 1 || backend.Type.Kind() != reflect.Pointer || backend.Type.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	client, ok := backend.Type.Elem().FieldByName("Client")
	if !ok || len(client.Index) != 1 || client.Type != reflect.TypeFor[*http.Client]() {
		return nil, false
	}
	return func() *http.Client {
		b := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(c), backend.Offset))
		if b == nil {
			return nil
		}
		return *(**http.Client)(unsafe.Add(b, client.Offset))
	}, true
}

// limitRules returns the LimitRules of c's backend (Colly keeps them there, with no getter), or
// false when the layout is not v2.3.0's.
func limitRules(c *colly.Collector) ([]*colly.LimitRule, bool) {
	backend := reflect.ValueOf(c).Elem().FieldByName("backend")
	if !backend.IsValid() || backend.Kind() != reflect.Pointer || backend.Type().Elem().Kind() != reflect.Struct {
		return nil, false
	}
	if backend.IsNil() {
		return nil, true
	}
	rules := backend.Elem().FieldByName("LimitRules")
	if !rules.IsValid() || rules.Type() != reflect.TypeFor[[]*colly.LimitRule]() {
		return nil, false
	}
	// The field is exported, the struct holding it is not: read it through its address.
	got := *(*[]*colly.LimitRule)(unsafe.Pointer(rules.UnsafeAddr()))
	return append([]*colly.LimitRule(nil), got...), true
}

// jarCookie is one cookie a jar holds: its name, and the domain and path it is sent to.
type jarCookie struct{ name, domain, path string }

// jarCookies lists the cookies j holds. net/http/cookiejar has no way to list them without
// knowing every URL they are for, and Polite must name the ones it would not send. It reads the
// jar's entries under the jar's own lock, then keeps those the jar still sends (an expired cookie
// is not). It reports false when the jar's layout is not the one it reads.
func jarCookies(j *cookiejar.Jar) ([]jarCookie, bool) {
	v := reflect.ValueOf(j).Elem()
	mu, entries := v.FieldByName("mu"), v.FieldByName("entries")
	if !mu.IsValid() || mu.Type() != reflect.TypeFor[sync.Mutex]() || !entries.IsValid() ||
		entries.Kind() != reflect.Map || entries.Type().Key().Kind() != reflect.String ||
		entries.Type().Elem().Kind() != reflect.Map || entries.Type().Elem().Elem().Kind() != reflect.Struct {
		return nil, false
	}
	entry := entries.Type().Elem().Elem()
	for _, f := range []string{"Name", "Domain", "Path"} {
		if sf, ok := entry.FieldByName(f); !ok || sf.Type.Kind() != reflect.String {
			return nil, false
		}
	}
	var held []jarCookie
	lock := (*sync.Mutex)(unsafe.Pointer(mu.UnsafeAddr()))
	lock.Lock()
	for it := entries.MapRange(); it.Next(); {
		for e := it.Value().MapRange(); e.Next(); {
			held = append(held, jarCookie{name: e.Value().FieldByName("Name").String(),
				domain: e.Value().FieldByName("Domain").String(), path: e.Value().FieldByName("Path").String()})
		}
	}
	lock.Unlock()
	sent := held[:0]
	for _, h := range held {
		for _, ck := range j.Cookies(&url.URL{Scheme: "https", Host: h.domain, Path: h.path}) {
			if ck.Name == h.name {
				sent = append(sent, h)
				break
			}
		}
	}
	return sent, true
}
