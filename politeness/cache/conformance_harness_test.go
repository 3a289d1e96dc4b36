package cache_test

// This file replays the http-tests/cache-tests conformance suite (testdata/cache-tests, BSD-3-Clause,
// see its README) against the cache. It is adapted from the workplace's measuring tool: a Go
// re-implementation of the suite's test server (test-engine/server/handle-test.mjs) as an
// in-process httptest server, of its client checks (test-engine/client/test.mjs) and of its
// scoring (test-engine/lib/results.mjs), so the cache is scored the way cache-tests.fyi scores
// browsers. The suite's own names are kept so each check can be compared with the original.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ---------- test definition types (see cache-tests CONTRIBUTING.md) ----------

type ctSuite struct {
	Name  string    `json:"name"`
	ID    string    `json:"id"`
	Tests []*ctTest `json:"tests"`
}

type ctTest struct {
	Name        string   `json:"name"`
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Requests    []*ctReq `json:"requests"`
	BrowserOnly bool     `json:"browser_only"`
	BrowserSkip bool     `json:"browser_skip"`
	CDNOnly     bool     `json:"cdn_only"`
	DependsOn   []string `json:"depends_on"`
	suite       string
}

type ctReq struct {
	RequestMethod                  string          `json:"request_method"`
	RequestHeaders                 [][]any         `json:"request_headers"`
	RequestBody                    *string         `json:"request_body"`
	QueryArg                       string          `json:"query_arg"`
	Filename                       string          `json:"filename"`
	Cache                          string          `json:"cache"`
	Redirect                       string          `json:"redirect"`
	PauseAfter                     bool            `json:"pause_after"`
	Disconnect                     bool            `json:"disconnect"`
	MagicLocations                 bool            `json:"magic_locations"`
	MagicIMS                       bool            `json:"magic_ims"`
	RFC850Date                     []string        `json:"rfc850date"`
	ResponseStatus                 []any           `json:"response_status"`
	ResponseHeaders                [][]any         `json:"response_headers"`
	ResponseBody                   json.RawMessage `json:"response_body"`
	InterimResponses               [][]any         `json:"interim_responses"`
	ResponsePause                  *float64        `json:"response_pause"`
	CheckBody                      json.RawMessage `json:"check_body"`
	ExpectedType                   string          `json:"expected_type"`
	ExpectedMethod                 string          `json:"expected_method"`
	ExpectedStatus                 json.RawMessage `json:"expected_status"`
	ExpectedRequestHeaders         []any           `json:"expected_request_headers"`
	ExpectedRequestHeadersMissing  []any           `json:"expected_request_headers_missing"`
	ExpectedResponseHeaders        []any           `json:"expected_response_headers"`
	ExpectedResponseHeadersMissing []any           `json:"expected_response_headers_missing"`
	ExpectedResponseText           json.RawMessage `json:"expected_response_text"`
	ExpectedInterimResponses       [][]any         `json:"expected_interim_responses"`
	Setup                          bool            `json:"setup"`
	SetupTests                     []string        `json:"setup_tests"`
}

func (r *ctReq) setupCheck(member string) bool {
	if r.Setup {
		return true
	}
	for _, s := range r.SetupTests {
		if s == member {
			return true
		}
	}
	return false
}

// ---------- assertion plumbing (mirrors test-engine/lib/utils.mjs) ----------

type failure struct {
	Kind string // "Setup", "Assertion", "Error"
	Msg  string
}

func (f *failure) Error() string { return f.Kind + ": " + f.Msg }

func assert(isSetup, cond bool, format string, args ...any) {
	if cond {
		return
	}
	k := "Assertion"
	if isSetup {
		k = "Setup"
	}
	panic(&failure{k, fmt.Sprintf(format, args...)})
}

// ---------- helpers ----------

var dateHeaders = map[string]bool{"date": true, "expires": true, "last-modified": true, "if-modified-since": true, "if-unmodified-since": true}
var locationHeaders = map[string]bool{"location": true, "content-location": true}
var noBodyStatus = map[int]bool{204: true, 304: true}

func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func httpDate(nowMs int64, deltaSecs float64, rfc850 bool) string {
	t := time.UnixMilli(nowMs + int64(deltaSecs*1000)).UTC()
	if rfc850 {
		return t.Format("Monday, 02-Jan-06 15:04:05 GMT")
	}
	return t.Format(http.TimeFormat)
}

func jsString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

func isInteger(v any) (float64, bool) {
	f, ok := v.(float64)
	if !ok {
		return 0, false
	}
	return f, f == float64(int64(f))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fixupHeader mirrors test-engine/lib/header-fixup.mjs. respHeaders: lowercased map.
func fixupHeader(name string, value any, respHeaders func(string) string, r *ctReq) string {
	lname := strings.ToLower(name)
	if f, ok := isInteger(value); ok && dateHeaders[lname] {
		now, _ := strconv.ParseInt(respHeaders("server-now"), 10, 64)
		value = httpDate(now, f, contains(r.RFC850Date, lname))
	}
	s := jsString(value)
	if locationHeaders[lname] && r.MagicLocations {
		base := respHeaders("server-base-url")
		if s != "" {
			s = base + "/" + s
		} else {
			s = base
		}
	}
	return s
}

func rawPresent(m json.RawMessage) bool { return len(m) > 0 }
func rawNull(m json.RawMessage) bool    { return string(m) == "null" }

// ---------- server (mirrors test-engine/server/handle-test.mjs) ----------

type serverReq struct {
	RequestNum      int
	RequestMethod   string
	RequestHeaders  http.Header
	ResponseHeaders [][2]string
}

type testState struct {
	mu       sync.Mutex
	requests []*ctReq
	stash    []serverReq
	sent     map[int][][2]string // fixed-up response headers actually sent, per config index
}

var (
	statesMu sync.Mutex
	states   = map[string]*testState{}
)

func getHeader(st *testState, idx int, name string) (string, bool) {
	// previousConfig.response_headers; in JS these are mutated in place by fixupHeader when sent
	var res string
	found := false
	if hs, ok := st.sent[idx]; ok {
		for _, h := range hs {
			if strings.EqualFold(h[0], name) {
				res, found = h[1], true
			}
		}
		return res, found
	}
	if idx < 0 || idx >= len(st.requests) {
		return "", false
	}
	for _, h := range st.requests[idx].ResponseHeaders {
		if strings.EqualFold(jsString(h[0]), name) {
			if s, ok := h[1].(string); ok { // an unfixed integer date never matches
				res, found = s, true
			} else {
				res, found = "", false
			}
		}
	}
	return res, found
}

func handleTest(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/test/"), "/")
	uuid := segs[0]
	statesMu.Lock()
	st := states[uuid]
	statesMu.Unlock()
	if st == nil {
		http.Error(w, "Requests not found for "+uuid, 409)
		return
	}
	st.mu.Lock()
	srvReqNum := len(st.stash) + 1
	st.mu.Unlock()
	cliReqNum, cliErr := strconv.Atoi(r.Header.Get("Req-Num"))
	reqNum := srvReqNum
	if cliErr == nil && cliReqNum != 0 {
		reqNum = cliReqNum
	}
	if reqNum-1 >= len(st.requests) || reqNum < 1 {
		http.Error(w, fmt.Sprintf("config not found for request %d", srvReqNum), 409)
		return
	}
	rc := st.requests[reqNum-1]
	if rc.ResponsePause != nil {
		time.Sleep(time.Duration(*rc.ResponsePause * float64(time.Second)))
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	srvReqNum = len(st.stash) + 1
	now := time.Now().UnixMilli()

	// The response is written raw on the hijacked connection (then closed), as Node's
	// http server would send it: Go's ResponseWriter would otherwise strip Content-Type and
	// Content-Length from 304s, refuse bodies longer than a test-set Content-Length, etc.
	var raw strings.Builder
	for _, ir := range rc.InterimResponses {
		code := int(ir[0].(float64))
		fmt.Fprintf(&raw, "HTTP/1.1 %d %s\r\n", code, http.StatusText(code))
		if len(ir) > 1 {
			hdrs, _ := ir[1].([]any)
			for _, h := range hdrs {
				hv := h.([]any)
				fmt.Fprintf(&raw, "%s: %s\r\n", jsString(hv[0]), jsString(hv[1]))
			}
		}
		raw.WriteString("\r\n")
	}

	status, reason := 200, "OK"
	if len(rc.ResponseStatus) > 0 {
		status = int(rc.ResponseStatus[0].(float64))
		if len(rc.ResponseStatus) > 1 {
			reason = jsString(rc.ResponseStatus[1])
		}
	}
	if strings.HasSuffix(rc.ExpectedType, "validated") {
		s := 0
		if lm, ok := getHeader(st, reqNum-2, "Last-Modified"); ok && len(r.Header.Values("If-Modified-Since")) > 0 && strings.Join(r.Header.Values("If-Modified-Since"), ", ") == lm {
			s = 304
		}
		if et, ok := getHeader(st, reqNum-2, "ETag"); ok && len(r.Header.Values("If-None-Match")) > 0 && strings.Join(r.Header.Values("If-None-Match"), ", ") == et {
			s = 304
		}
		if s == 304 {
			status, reason = 304, "Not Modified"
		} else {
			status, reason = 999, "304 Not Generated"
		}
	}

	// ordered header list, like Node's response.setHeader/getHeaders
	type kv struct{ k, v string }
	var hdrs []kv
	get := func(n string) []string {
		var out []string
		for _, x := range hdrs {
			if strings.EqualFold(x.k, n) {
				out = append(out, x.v)
			}
		}
		return out
	}
	hdrs = append(hdrs, kv{"Server-Base-Url", r.URL.RequestURI()}, kv{"Server-Request-Count", strconv.Itoa(srvReqNum)})
	if cliErr == nil {
		hdrs = append(hdrs, kv{"Client-Request-Count", strconv.Itoa(cliReqNum)})
	} else {
		hdrs = append(hdrs, kv{"Client-Request-Count", "NaN"})
	}
	hdrs = append(hdrs, kv{"Server-Now", strconv.FormatInt(now, 10)})
	respGet := func(n string) string { return strings.Join(get(n), ", ") }
	var saved [][2]string
	savedIdx := map[string]int{}
	var sent [][2]string
	for _, hdr := range rc.ResponseHeaders {
		name := jsString(hdr[0])
		val := fixupHeader(name, hdr[1], respGet, rc)
		hdrs = append(hdrs, kv{name, val})
		sent = append(sent, [2]string{name, val})
		if len(hdr) < 3 || hdr[2] == true {
			joined := strings.Join(get(name), ", ")
			if i, ok := savedIdx[name]; ok {
				saved[i][1] = joined
			} else {
				savedIdx[name] = len(saved)
				saved = append(saved, [2]string{name, joined})
			}
		}
	}
	st.sent[reqNum-1] = sent
	if len(get("Content-Type")) == 0 {
		hdrs = append(hdrs, kv{"Content-Type", "text/plain"})
	}
	st.stash = append(st.stash, serverReq{cliReqNum, r.Method, r.Header.Clone(), saved})
	var nums []string
	for _, s := range st.stash {
		nums = append(nums, strconv.Itoa(s.RequestNum))
	}
	hdrs = append(hdrs, kv{"Request-Numbers", strings.Join(nums, " ")})

	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijack", 500)
		return
	}
	conn, bufrw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	if rc.Disconnect {
		return
	}
	body := uuid
	if rawPresent(rc.ResponseBody) && !rawNull(rc.ResponseBody) {
		var s string
		if json.Unmarshal(rc.ResponseBody, &s) == nil && s != "" {
			body = s
		}
	}
	hasBody := !noBodyStatus[status] && status >= 200
	if !hasBody {
		body = ""
	}
	if len(get("Date")) == 0 { // Node adds Date unless the test set one
		hdrs = append(hdrs, kv{"Date", time.Now().UTC().Format(http.TimeFormat)})
	}
	if hasBody && len(get("Content-Length")) == 0 && len(get("Transfer-Encoding")) == 0 {
		hdrs = append(hdrs, kv{"Content-Length", strconv.Itoa(len(body))})
	}
	if r.Method == http.MethodHead {
		body = ""
	}
	fmt.Fprintf(&raw, "HTTP/1.1 %d %s\r\n", status, reason)
	for _, x := range hdrs {
		fmt.Fprintf(&raw, "%s: %s\r\n", x.k, strings.NewReplacer("\r", " ", "\n", " ").Replace(x.v))
	}
	raw.WriteString("\r\n")
	raw.WriteString(body)
	_, _ = bufrw.WriteString(raw.String())
	_ = bufrw.Flush()
}

// ---------- client (mirrors test-engine/client/test.mjs) ----------

type clientResp struct {
	status  int
	header  http.Header
	body    string
	interim [][2]any // code, textproto.MIMEHeader
}

func (c *clientResp) get(n string) string { return strings.Join(c.header.Values(n), ", ") }
func (c *clientResp) has(n string) bool   { return len(c.header.Values(n)) > 0 }

func runTest(t *ctTest, base string, client *http.Client) (result any) {
	uuid := token()
	st := &testState{requests: t.Requests, sent: map[int][][2]string{}}
	statesMu.Lock()
	states[uuid] = st
	statesMu.Unlock()

	defer func() {
		if p := recover(); p != nil {
			if f, ok := p.(*failure); ok {
				result = []string{f.Kind, f.Msg}
				return
			}
			result = []string{"Error", fmt.Sprint(p)}
		}
	}()

	var responses []*clientResp
	for i, rc := range t.Requests {
		reqNum := i + 1
		url := base + "/test/" + uuid
		if rc.Filename != "" {
			url += "/" + rc.Filename
		}
		if rc.QueryArg != "" {
			url += "?" + rc.QueryArg
		}
		method := "GET"
		if rc.RequestMethod != "" {
			method = rc.RequestMethod
		}
		var body io.Reader
		if rc.RequestBody != nil {
			body = strings.NewReader(*rc.RequestBody)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cr := &clientResp{}
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			Got1xxResponse: func(code int, header textproto.MIMEHeader) error {
				cr.interim = append(cr.interim, [2]any{code, header})
				return nil
			},
		})
		req, err := http.NewRequestWithContext(ctx, method, url, body)
		if err != nil {
			cancel()
			panic(&failure{"Error", err.Error()})
		}
		for _, hdr := range rc.RequestHeaders {
			name := jsString(hdr[0])
			val := jsString(hdr[1])
			if rc.MagicIMS && strings.EqualFold(name, "if-modified-since") && i > 0 {
				prev := responses[i-1]
				val = fixupHeader(name, hdr[1], prev.get, rc)
			}
			req.Header.Add(name, val)
		}
		req.Header.Set("Test-Name", t.Name)
		req.Header.Set("Test-ID", t.ID)
		req.Header.Set("Req-Num", strconv.Itoa(reqNum))
		resp, err := client.Do(req)
		if err != nil {
			cancel()
			if rc.Disconnect && rawNull(rc.ExpectedStatus) {
				// The origin dropped the connection and the test accepts any status: a
				// RoundTripper error here is what a proxy would turn into a 502, i.e. the
				// cache did not serve stale. Model it as an empty, header-less 502.
				cr.status, cr.header = 502, http.Header{}
			} else {
				// fetch() rejection: a plain (non-setup) failure, as in the JS harness
				panic(&failure{"Error", fmt.Sprintf("request %d: %v", reqNum, err)})
			}
		} else {
			var b []byte
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			cr.status = resp.StatusCode
			cr.header = resp.Header
			cr.body = string(b)
		}
		responses = append(responses, cr)
		checkResponse(t, uuid, rc, reqNum, cr)
		if rc.PauseAfter {
			time.Sleep(3 * time.Second)
		}
	}
	st.mu.Lock()
	state := append([]serverReq(nil), st.stash...)
	st.mu.Unlock()
	checkServerRequests(t.Requests, responses, state)
	return true
}

func checkResponse(t *ctTest, uuid string, rc *ctReq, reqNum int, resp *clientResp) {
	resNum, resErr := strconv.Atoi(resp.get("Server-Request-Count"))
	if resp.has("Request-Numbers") {
		seen := map[string]bool{}
		for _, n := range strings.Fields(resp.get("Request-Numbers")) {
			if seen[n] {
				assert(true, false, "retry")
			}
			seen[n] = true
		}
	}
	if rc.ExpectedType != "" {
		typeSetup := rc.setupCheck("expected_type")
		if rc.ExpectedType == "cached" {
			if resp.status == 304 && resErr != nil {
				// pass
			} else {
				assert(typeSetup, resErr == nil && resNum < reqNum, "Response %d does not come from cache", reqNum)
			}
		}
		if rc.ExpectedType == "not_cached" {
			assert(typeSetup, resErr == nil && resNum == reqNum, "Response %d comes from cache", reqNum)
		}
	}
	if rawPresent(rc.ExpectedStatus) {
		if !rawNull(rc.ExpectedStatus) {
			var es int
			_ = json.Unmarshal(rc.ExpectedStatus, &es)
			assert(rc.setupCheck("expected_status"), resp.status == es, "Response %d status is %d, not %d", reqNum, resp.status, es)
		}
	} else if len(rc.ResponseStatus) > 0 {
		es := int(rc.ResponseStatus[0].(float64))
		assert(true, resp.status == es, "Response %d status is %d, not %d", reqNum, resp.status, es)
	} else if resp.status == 999 {
		assert(rc.setupCheck("expected_type"), false, "Request %d should have been conditional, but it was not.", reqNum)
	} else {
		assert(true, resp.status == 200, "Response %d status is %d, not 200", reqNum, resp.status)
	}
	if rc.ExpectedResponseHeaders != nil {
		setup := rc.setupCheck("expected_response_headers")
		for _, hv := range rc.ExpectedResponseHeaders {
			switch h := hv.(type) {
			case string:
				assert(setup, resp.has(h), "Response %d %s header not present.", reqNum, h)
			case []any:
				name := jsString(h[0])
				if len(h) > 2 {
					assert(setup, resp.has(name), "Response %d %s header not present.", reqNum, name)
					value := resp.get(name)
					op := jsString(h[1])
					switch op {
					case "=":
						exp := resp.get(jsString(h[2]))
						assert(setup, value == exp, "Response %d header %s is %s, should match %s (%s)", reqNum, name, value, jsString(h[2]), exp)
					case ">":
						n, _ := strconv.Atoi(strings.TrimSpace(value))
						assert(setup, n > int(h[2].(float64)), "Response %d header %s is %s, should be bigger than %v", reqNum, name, value, h[2])
					default:
						panic(&failure{"Error", "unknown operator " + op})
					}
				} else {
					exp := fixupHeader(name, h[1], resp.get, rc)
					got := resp.get(name)
					if !resp.has(name) {
						got = "null"
					}
					assert(setup, resp.has(name) && got == exp, "Response %d header %s is \"%s\", not \"%s\"", reqNum, name, got, exp)
				}
			}
		}
	}
	if rc.ExpectedResponseHeadersMissing != nil {
		setup := rc.setupCheck("expected_response_headers_missing")
		for _, hv := range rc.ExpectedResponseHeadersMissing {
			switch h := hv.(type) {
			case string:
				assert(setup, !resp.has(h), "Response %d includes unexpected header %s: \"%s\"", reqNum, h, resp.get(h))
			case []any:
				// The JS harness indexes response.headers[name] (always undefined on a Fetch Headers
				// object), so the two-element form never fails there; mirror that faithfully.
			}
		}
	}
	if rc.ExpectedInterimResponses != nil {
		setup := rc.setupCheck("expected_interim_responses")
		for idx, ir := range rc.ExpectedInterimResponses {
			code := int(ir[0].(float64))
			if idx >= len(resp.interim) {
				assert(setup, false, "Interim response %d not received", idx+1)
			}
			got := resp.interim[idx]
			assert(setup, got[0].(int) == code, "Interim response %d status is %v, not %d", idx+1, got[0], code)
			if len(ir) > 1 {
				hdrs, _ := ir[1].([]any)
				mh := got[1].(textproto.MIMEHeader)
				for _, hh := range hdrs {
					name := jsString(hh.([]any)[0])
					assert(setup, len(mh.Values(name)) > 0, "Interim response %d %s header not present.", idx+1, name)
				}
			}
		}
		assert(setup, len(resp.interim) == len(rc.ExpectedInterimResponses), "Received %d interim response(s), expected %d", len(resp.interim), len(rc.ExpectedInterimResponses))
	}
	// body
	if rawPresent(rc.CheckBody) && string(rc.CheckBody) == "false" {
		return
	} else if rawPresent(rc.ExpectedResponseText) {
		if !rawNull(rc.ExpectedResponseText) {
			var s string
			_ = json.Unmarshal(rc.ExpectedResponseText, &s)
			assert(rc.setupCheck("expected_response_text"), resp.body == s, "Response body is \"%s\", not \"%s\"", resp.body, s)
		}
	} else if rawPresent(rc.ResponseBody) && !rawNull(rc.ResponseBody) {
		var s string
		_ = json.Unmarshal(rc.ResponseBody, &s)
		assert(true, resp.body == s, "Response body is \"%s\", not \"%s\"", resp.body, s)
	} else if !noBodyStatus[resp.status] && rc.RequestMethod != "HEAD" {
		assert(true, resp.body == uuid, "Response body is \"%s\", not \"%s\"", resp.body, uuid)
	}
}

func checkServerRequests(reqs []*ctReq, responses []*clientResp, state []serverReq) {
	testIdx := 0
	for i, rc := range reqs {
		reqNum := i + 1
		var expectedValidating []string
		typeSetup := rc.setupCheck("expected_type")
		var sr *serverReq
		if testIdx < len(state) {
			sr = &state[testIdx]
		}
		if rc.ExpectedType != "" {
			if rc.ExpectedType == "cached" {
				continue
			}
			if rc.ExpectedType == "not_cached" {
				assert(typeSetup, sr != nil, "request %d wasn't sent to server", reqNum)
				assert(typeSetup, sr.RequestNum == reqNum, "Response %d comes from cache (%d on server)", reqNum, sr.RequestNum)
			}
			if rc.ExpectedType == "etag_validated" {
				expectedValidating = append(expectedValidating, "if-none-match")
			}
			if rc.ExpectedType == "lm_validated" {
				expectedValidating = append(expectedValidating, "if-modified-since")
			}
		}
		testIdx++
		for _, vh := range expectedValidating {
			assert(typeSetup, sr != nil, "request %d wasn't sent to server", reqNum)
			assert(typeSetup, len(sr.RequestHeaders.Values(vh)) > 0, "request %d doesn't have %s header", reqNum, vh)
		}
		if rc.ExpectedRequestHeaders != nil {
			setup := rc.setupCheck("expected_request_headers")
			assert(setup, sr != nil, "request %d wasn't sent to server", reqNum)
			for _, hv := range rc.ExpectedRequestHeaders {
				switch h := hv.(type) {
				case string:
					assert(setup, len(sr.RequestHeaders.Values(h)) > 0, "Request %d %s header not present.", reqNum, h)
				case []any:
					name := jsString(h[0])
					got := strings.Join(sr.RequestHeaders.Values(name), ", ")
					assert(setup, len(sr.RequestHeaders.Values(name)) > 0 && got == jsString(h[1]), "Request %d header %s is \"%s\", not \"%s\"", reqNum, name, got, jsString(h[1]))
				}
			}
		}
		if rc.ExpectedRequestHeadersMissing != nil {
			setup := rc.setupCheck("expected_request_headers_missing")
			if sr != nil {
				for _, hv := range rc.ExpectedRequestHeadersMissing {
					switch h := hv.(type) {
					case string:
						assert(setup, len(sr.RequestHeaders.Values(h)) == 0, "Request %d %s header present.", reqNum, h)
					case []any:
						name := jsString(h[0])
						got := strings.Join(sr.RequestHeaders.Values(name), ", ")
						assert(setup, got != jsString(h[1]), "Request %d header %s is \"%s\"", reqNum, name, got)
					}
				}
			}
		}
		if sr != nil && i < len(responses) {
			resp := responses[i]
			for _, hh := range sr.ResponseHeaders {
				if strings.EqualFold(hh[0], "date") {
					continue
				}
				got := resp.get(hh[0])
				if !resp.has(hh[0]) {
					got = "null"
				}
				assert(true, resp.has(hh[0]) && got == hh[1], "Response %d header %s is \"%s\", not \"%s\"", reqNum, hh[0], got, hh[1])
			}
		}
		if rc.ExpectedMethod != "" {
			assert(rc.setupCheck("expected_method"), sr != nil && sr.RequestMethod == rc.ExpectedMethod, "Request %d had method %v, not %s", reqNum, func() string {
				if sr == nil {
					return "<none>"
				}
				return sr.RequestMethod
			}(), rc.ExpectedMethod)
		}
	}
}

// ---------- result classification (mirrors test-engine/lib/results.mjs) ----------

func determine(t *ctTest, byID map[string]*ctTest, results map[string]any, honorDeps bool) string {
	r, ok := results[t.ID]
	if !ok {
		return "untested"
	}
	if honorDeps {
		for _, d := range t.DependsOn {
			dt := byID[d]
			if dt == nil {
				continue
			}
			dr := determine(dt, byID, results, true)
			if dr != "pass" && dr != "yes" {
				return "dependency_fail"
			}
		}
	}
	if f, ok := r.([]string); ok && f[0] == "Setup" {
		if f[1] == "retry" {
			return "retry"
		}
		return "setup_fail"
	}
	pass := r == true
	switch t.Kind {
	case "", "required":
		if pass {
			return "pass"
		}
		return "fail"
	case "optimal":
		if pass {
			return "pass"
		}
		return "optional_fail"
	case "check":
		if pass {
			return "yes"
		}
		return "no"
	}
	return "unknown"
}

// category of a test from a private (client-side, single-user) cache's point of view
func category(t *ctTest) string {
	id := t.ID
	switch {
	case t.CDNOnly || t.suite == "cdn-cache-control":
		return "cdn"
	case t.suite == "auth" || id == "cc-resp-private-shared" || strings.Contains(id, "s-maxage-shared") ||
		id == "freshness-s-maxage-shared" || id == "stale-close-proxy-revalidate" || id == "stale-close-s-maxage=2":
		return "shared"
	case t.suite == "conditional-lm" || (t.suite == "conditional-inm" && t.BrowserSkip):
		return "intermediary"
	}
	for _, r := range t.Requests {
		if r.Cache != "" { // Fetch API cache mode (browser reload semantics)
			return "browser"
		}
	}
	if id == "headers-store-Transfer-Encoding" {
		// the origin sends an unknown transfer-coding; Go's net/http client refuses the
		// response before any cache sees it, so no Go RoundTripper can be scored on it
		return "n/a-go"
	}
	return "private"
}
