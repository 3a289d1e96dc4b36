package cookies

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

func TestVendoredDataMatchesProvenance(t *testing.T) {
	sum := sha256.Sum256(openCookieDatabase)
	if got := hex.EncodeToString(sum[:]); got != DataSHA256 {
		t.Fatalf("embedded CSV sha256 = %s, DataSHA256 = %s: the vendored file changed; update PROVENANCE.md and DataSHA256 together", got, DataSHA256)
	}
	prov, err := os.ReadFile("data/PROVENANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{DataCommit, DataSHA256, "Apache"} {
		if !strings.Contains(string(prov), want) {
			t.Errorf("data/PROVENANCE.md does not mention %q", want)
		}
	}
	lic, err := os.ReadFile("data/LICENSE")
	if err != nil || !strings.Contains(string(lic), "Apache License") {
		t.Errorf("data/LICENSE missing or not the Apache licence (err %v)", err)
	}
}

// The counts are facts about this snapshot (see data/PROVENANCE.md): a change means the loader
// reads the file differently, which must be a decision, not an accident.
func TestDataLoadsWithItsQuirks(t *testing.T) {
	d := Data()
	if d.Err != nil {
		t.Fatal(d.Err)
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"entries", d.Entries, 2264},
		{"skipped rows", d.Skipped, 0},
		{"duplicate rows (18 names, one of them thrice)", d.Duplicates, 19},
		{"duplicates filed under another category (token, chk, dc, euconsent)", d.Conflicts, 4},
		{"case-collision groups", d.CaseCollisions, 6},
		{"placeholder tails read as prefixes", d.Placeholders, 7},
		{"names cleaned of a tab or soft hyphen", d.Cleaned, 2},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
}

func TestClassify(t *testing.T) {
	long := strings.Repeat("_ga_", MaxNameLen/4+1)
	tests := []struct {
		name, why string
		cat       Category
		src       Source
		pattern   string // "" = do not check
		platform  string // "" = do not check
	}{
		// The data, exact and prefix.
		{"_ga", "exact name", Analytics, DataExact, "_ga", "Google Analytics"},
		{"_gid", "exact name", Analytics, DataExact, "_gid", ""},
		{"_fbp", "exact name", Marketing, DataExact, "_fbp", "Facebook"},
		{"_ga_ABC123", "wildcard prefix", Analytics, DataPrefix, "_ga_", ""},
		{"_gac_gb_123", "longest prefix wins over _gac_", Marketing, DataPrefix, "_gac_gb_", "Google Ads"},
		{"wp-settings-time-1", "longest prefix wins over wp-settings-", Functional, DataPrefix, "wp-settings-time-", ""},
		{"tp", "exact beats the Tailtarget prefix", Marketing, DataExact, "tp", "Bombora"},
		{"_s", "exact (Shopify) beats the Marfeel prefix", Analytics, DataExact, "_s", "Shopify"},

		// Duplicates: the more restrictive category wins.
		{"token", "our session list beats the data (Adform Marketing, Xandr Functional)", Session, OurRule, "token", ""},
		{"chk", "Mediarithmics Marketing beats PubMatic Functional", Marketing, DataExact, "chk", "Mediarithmics"},
		{"dc", "Marketing beats Functional", Marketing, DataExact, "dc", "BetweenDigital"},
		{"u", "three rows, same category: the first", Marketing, DataExact, "u", "Totvs"},

		// Case collisions: exact case first, then folded with the more restrictive entry.
		{"oid", "exact case: Salesforce", Functional, DataExact, "oid", "Salesforce"},
		{"OID", "exact case: Bing", Marketing, DataExact, "OID", "Bing / Microsoft"},
		{"Oid", "folded: the more restrictive of oid/OID", Marketing, DataExact, "OID", ""},
		{"lang", "exact case: LinkedIn", Functional, DataExact, "lang", "LinkedIn"},
		{"LANG", "exact case: Piano", Functional, DataExact, "LANG", "Piano"},

		// Short prefixes (≤3 characters).
		{"_session", "Marfeel's _s must not catch a word", Unknown, NoMatch, "", ""},
		{"_sx", "_s followed by a letter", Unknown, NoMatch, "", ""},
		{"_s1", "_s followed by a non-letter", Analytics, DataPrefix, "_s", "Marfeel"},
		{"SR12345", "Adform SR with a generated tail", Marketing, DataPrefix, "SR", "Adform"},
		{"CTX", "Adform CT followed by a letter", Unknown, NoMatch, "", ""},
		{"capital", "Adhese cap followed by a letter", Unknown, NoMatch, "", ""},
		{"cap_3", "Adhese cap followed by a separator", Marketing, DataPrefix, "cap", "Adhese"},
		{"_utm_source", "Marfeel _ut followed by a letter", Unknown, NoMatch, "", ""},
		{"mp_0123abcd_mixpanel", "separator-ended short prefix", Analytics, DataPrefix, "mp_", "Mixpanel"},
		{"sb-abc-auth-token", "Supabase sb-, moved to Login by the platform rule", Login, DataPrefix, "sb-", "Supabase"},

		// Placeholders and invisible characters.
		{"pm_sess_123", "NNN placeholder", Functional, DataPrefix, "pm_sess_", ""},
		{"SSPR_abc", "* placeholder", Marketing, DataPrefix, "SSPR_", ""},
		{"pagead/conv/42", "%INTEGER% placeholder", Analytics, DataPrefix, "pagead/conv/", ""},
		{"ce_need_secure_cookie", "tab removed", Analytics, DataExact, "ce_need_secure_cookie", ""},
		{"logglytrackingsession", "soft hyphen removed", Functional, DataExact, "logglytrackingsession", ""},

		// Our lists beat the data's "Functional".
		{"OptanonConsent", "consent", Consent, OurRule, "OptanonConsent", ""},
		{"CookieConsent", "consent", Consent, OurRule, "", ""},
		{"euconsent-v2", "consent", Consent, OurRule, "", ""},
		{"cmplz_marketing", "consent prefix", Consent, OurRule, "cmplz_*", ""},
		{"borlabs-cookie", "consent", Consent, OurRule, "", ""},
		{"cf_clearance", "anti-bot", AntiBot, OurRule, "", ""},
		{"incap_ses_123_456", "anti-bot prefix", AntiBot, OurRule, "incap_ses_*", ""},
		{"datadome", "anti-bot, folded (the data says Datadome)", AntiBot, OurRule, "", ""},
		{"wordpress_logged_in_x", "login, longest of our prefixes", Login, OurRule, "wordpress_logged_in_*", ""},
		{"wp-postpass_abc", "login", Login, OurRule, "", ""},
		{"__tbc", "paywall (Piano)", Paywall, OurRule, "", ""},
		{"sessionid", "Django's session; our list beats Instagram's entry", Session, OurRule, "", ""},

		// Our lists for names missing from the data.
		{"uc_settings", "Usercentrics", Consent, OurRule, "", ""},
		{"uc_user_interaction", "Usercentrics", Consent, OurRule, "", ""},
		{"notice_gdpr_prefs", "TrustArc", Consent, OurRule, "notice_*", ""},
		{"cmapi_cookie_privacy", "TrustArc", Consent, OurRule, "cmapi_*", ""},
		{"_sp_v1_data", "Sourcepoint", Consent, OurRule, "_sp_v1_*", ""},
		{"__gpp", "IAB GPP", Consent, OurRule, "", ""},
		{"addtl_consent", "Google additional consent", Consent, OurRule, "", ""},
		{"my_site_consent_choice", "the consent substring rule", Consent, OurRule, "*consent*", ""},
		{"bm_sz", "Akamai", AntiBot, OurRule, "", ""},
		{"_px3", "PerimeterX", AntiBot, OurRule, "_px*", ""},
		{"reese84", "Shape/F5", AntiBot, OurRule, "", ""},
		{"aws-waf-token", "AWS WAF", AntiBot, OurRule, "", ""},
		{"wordpress_sec_abc", "WordPress secure auth", Login, OurRule, "wordpress_sec_*", ""},
		{"wordpress_0123456789abcdef", "WordPress auth cookie", Login, OurRule, "wordpress_*", ""},

		// Platform rules.
		{"FunctionalCookie", "OneTrust entry filed Functional", Consent, DataExact, "", "OneTrust"},
		{"_mkto_trk", "OneTrust entry filed Marketing stays Marketing", Marketing, DataExact, "", "OneTrust"},
		{"did", "Auth0 device id", Login, DataExact, "", "Auth0"},
		{"AKA_A2", "Akamai (not Bot Manager) stays Functional", Functional, DataExact, "", "Akamai"},

		// Purpose classes.
		{"PHPSESSID", "session", Session, OurRule, "", ""},
		{"JSESSIONID.node1", "session prefix", Session, OurRule, "JSESSIONID*", ""},
		{"ASPSESSIONIDQCRBTSDA", "classic ASP session", Session, OurRule, "", ""},
		{"ASP.NET_SessionId", "session", Session, OurRule, "", ""},
		{"AWSALB", "loadbalancer", LoadBalancer, OurRule, "", ""},
		{"AWSALBCORS", "loadbalancer", LoadBalancer, OurRule, "", ""},
		{"ARRAffinity", "loadbalancer", LoadBalancer, OurRule, "", ""},
		{"BIGipServerpool_web", "loadbalancer prefix", LoadBalancer, OurRule, "BIGipServer*", ""},
		{"__cflb", "Cloudflare's load balancer, not anti-bot", LoadBalancer, OurRule, "", ""},
		{"csrftoken", "csrf", CSRF, OurRule, "", ""},
		{"XSRF-TOKEN", "csrf", CSRF, OurRule, "", ""},
		{"xsrf-token", "csrf, folded", CSRF, OurRule, "", ""},
		{"__RequestVerificationToken_L2FwcA2", "csrf prefix", CSRF, OurRule, "", ""},

		// Unknown.
		{"myapp_state", "not in the data or our lists", Unknown, NoMatch, "", ""},
		{"", "empty", Unknown, NoMatch, "", ""},
		{long, "longer than MaxNameLen", Unknown, NoMatch, "", ""},
	}
	for _, tt := range tests {
		m := Lookup(tt.name)
		if m.Category != tt.cat || m.Source != tt.src ||
			(tt.pattern != "" && m.Pattern != tt.pattern) || (tt.platform != "" && m.Platform != tt.platform) {
			t.Errorf("Lookup(%q) (%s) = %+v; want %s from %s, pattern %q, platform %q",
				tt.name, tt.why, m, tt.cat, tt.src, tt.pattern, tt.platform)
		}
		if Classify(tt.name) != m.Category {
			t.Errorf("Classify(%q) disagrees with Lookup", tt.name)
		}
	}
}

// Our lists come first, so a mistake in them could keep a tracker the data knows. No rule of ours
// may turn a data entry filed as Analytics, Marketing or Personalization into a keepable class,
// except where the package documentation says so.
func TestOurRulesKeepNoDataTracker(t *testing.T) {
	documented := map[string]bool{"sessionid": true, "SID": true, "token": true}
	d := &loadTables().data
	for _, m := range []map[string]dataEntry{d.exact, d.prefix} {
		for name, e := range m {
			if !e.dataCat.NeverKept() {
				continue
			}
			got := Lookup(name)
			if got.Category.Declarable() && !documented[name] {
				t.Errorf("%q is %s in the data (%s) but our rule %q makes it %s",
					name, e.dataCat, e.platform, got.Pattern, got.Category)
			}
		}
	}
}

func TestOurRulesAreUniqueAndDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]Category{}
	for _, r := range ourRules {
		for _, p := range r.patterns {
			k := strings.ToLower(p)
			if c, dup := seen[k]; dup {
				t.Errorf("pattern %q listed twice (%s and %s)", p, c, r.cat)
			}
			seen[k] = r.cat
			if !strings.Contains(string(doc), p) {
				t.Errorf("pattern %q (%s) is not in the package documentation", p, r.cat)
			}
		}
	}
}

func TestParseDataQuirks(t *testing.T) {
	const header = "ID,Platform,Category,Cookie / Data Key name,Wildcard match\n"
	tests := []struct {
		name, csv string
		wantErr   bool
		lookups   map[string]Category // in the parsed table: exact, else prefix
		skipped   int
	}{
		{"conflicting duplicate keeps the restrictive one",
			header + "1,A,Functional,dup,0\n2,B,Marketing,dup,0\n3,C,Functional,dup,0\n", false,
			map[string]Category{"dup": Marketing}, 0},
		{"unknown category is skipped, not guessed",
			header + "1,A,Tasty,cookie,0\n2,A,Analytics,ok,0\n", false,
			map[string]Category{"ok": Analytics}, 1},
		{"columns found by header, not position",
			"Wildcard match,Cookie / Data Key name,Category,Platform\n1,pre_,Analytics,P\n", false,
			map[string]Category{"pre_": Analytics}, 0},
		{"placeholder becomes a prefix, wildcard column 0",
			header + "1,A,Security,sessNNN,0\n", false,
			map[string]Category{"sess": Security}, 0},
		{"short row is skipped",
			header + "1,A\n", false, nil, 1},
		{"missing column is an error", "ID,Platform,Category\n1,A,Analytics\n", true, nil, 0},
		{"broken quoting is an error", header + "1,A,Analytics,\"oops,0\n", true, nil, 0},
		{"empty input is an error", "", true, nil, 0},
	}
	for _, tt := range tests {
		d, err := parseData(strings.NewReader(tt.csv))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
			continue
		}
		if d.info.Skipped != tt.skipped {
			t.Errorf("%s: skipped %d, want %d", tt.name, d.info.Skipped, tt.skipped)
		}
		for n, want := range tt.lookups {
			e, ok := d.exact[n]
			if !ok {
				e, ok = d.prefix[n]
			}
			if !ok || e.cat != want {
				t.Errorf("%s: %q = %+v (found %v), want %s", tt.name, n, e, ok, want)
			}
		}
	}
}

// referenceLookup is Lookup written the slow, obvious way (linear scans), for differential fuzzing.
func referenceLookup(name string) Category {
	if c, ok := referenceRules(name, true); ok {
		return c
	}
	for _, p := range []string{"__host-", "__secure-"} {
		if len(name) > len(p) && strings.HasPrefix(strings.ToLower(name), p) {
			c, _ := referenceRules(name[len(p):], false)
			return c
		}
	}
	return Unknown
}

// referenceShape reports the literal length of the session shape low has, or -1.
func referenceShape(low string) int {
	for _, pre := range []string{"_", "sess", "ssess"} {
		for _, suf := range []string{"_session", "_key", ""} {
			if (pre == "_") != (suf != "") || len(low) <= len(pre)+len(suf) ||
				!strings.HasPrefix(low, pre) || !strings.HasSuffix(low, suf) {
				continue
			}
			mid := low[len(pre) : len(low)-len(suf)]
			if suf == "" && (len(mid) < 16 || strings.Trim(mid, "0123456789abcdef") != "") {
				continue
			}
			return len(pre) + len(suf)
		}
	}
	return -1
}

func referenceRules(name string, withData bool) (Category, bool) {
	if name == "" || len(name) > MaxNameLen {
		return Unknown, false
	}
	low := strings.ToLower(name)
	t := loadTables()
	best, bestCat := -1, Unknown
	for _, r := range ourRules {
		for _, p := range r.patterns {
			lp := strings.ToLower(p)
			if lp == low {
				return r.cat, true
			}
			if pre, ok := strings.CutSuffix(lp, "*"); ok && strings.HasPrefix(low, pre) && len(pre) > best {
				best, bestCat = len(pre), r.cat
			}
		}
	}
	if best >= 0 {
		return bestCat, true
	}
	if strings.Contains(low, "consent") {
		return Consent, true
	}
	shape := referenceShape(low)
	if !withData {
		if shape < 0 {
			return Unknown, false
		}
		return Session, true
	}
	e, ok := t.data.exact[name]
	if !ok {
		e, ok = t.data.folded[low]
	}
	if ok {
		if shape >= 0 && (e.cat == Functional || e.cat == Security || e.cat == Necessary) {
			return Session, true
		}
		return e.cat, true
	}
	best, bestCat = -1, Unknown
	for p, e := range t.data.prefix {
		if strings.HasPrefix(name, p) && len(p) > best && shortPrefixApplies(name, len(p)) {
			best, bestCat = len(p), e.cat
		}
	}
	if shape >= 0 && shape >= best {
		return Session, true
	}
	return bestCat, best >= 0
}

func FuzzLookup(f *testing.F) {
	for _, s := range []string{"_ga", "_ga_ABC", "_session", "_s", "_s1", "SR1", "CTX", "Oid", "PHPSESSID",
		"JSESSIONID.x", "wordpress_logged_in_1", "my_consent", "cmplz_", "mp_", "a", "", "\xff\xfe", "ÄÖÜ_ga",
		"_shop_session", "_ga_session", "_zendesk_session", "_Brochure_session", "_rd_wa_first_session_x_session",
		"_app_key", "SESS0123456789abcdef", "SSESS0123456789abcdeX", "__Host-sid", "__Secure-_ga", "__host-id", "__Host-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		m := Lookup(name)
		if want := referenceLookup(name); m.Category != want {
			t.Fatalf("Lookup(%q) = %+v, reference says %s", name, m, want)
		}
		switch m.Source {
		case NoMatch:
			if m.Category != Unknown || m.Pattern != "" {
				t.Fatalf("Lookup(%q) = %+v: no match must be Unknown without pattern", name, m)
			}
		case DataExact:
			if !strings.EqualFold(m.Pattern, name) {
				t.Fatalf("Lookup(%q) = %+v: exact match on another name", name, m)
			}
		case DataPrefix:
			if !strings.HasPrefix(name, m.Pattern) {
				t.Fatalf("Lookup(%q) = %+v: prefix does not prefix the name", name, m)
			}
		}
	})
}

var benchNames = []string{
	"_ga",                   // data exact
	"_ga_ABC123",            // data prefix
	"OptanonConsent",        // our exact
	"wordpress_logged_in_x", // our prefix
	"_session",              // short-prefix rule, unknown
	"Oid",                   // folded exact
	"myapp_state",           // unknown
}

func BenchmarkLookup(b *testing.B) {
	Lookup("warm up: load the data outside the timing")
	b.ReportAllocs()
	var sink Match
	for i := 0; b.Loop(); i++ {
		sink = Lookup(benchNames[i%len(benchNames)])
	}
	_ = sink
}

func FuzzParseData(f *testing.F) {
	f.Add("ID,Platform,Category,Cookie / Data Key name,Wildcard match\n1,A,Analytics,_x,0\n2,B,Marketing,p_NNN,1\n")
	f.Add("Wildcard match,Cookie / Data Key name,Category,Platform\n1,\"q,\"\"x\",Security,P\n")
	f.Add(string(openCookieDatabase[:2000]))
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		d, err := parseData(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, m := range []map[string]dataEntry{d.exact, d.prefix} {
			for k, e := range m {
				if k == "" || e.cat == Unknown || e.cat >= numCategories {
					t.Fatalf("entry %q = %+v: empty name or no category", k, e)
				}
			}
		}
		for i := 1; i < len(d.lengths); i++ {
			if d.lengths[i] >= d.lengths[i-1] {
				t.Fatalf("prefix lengths not strictly descending: %v", d.lengths)
			}
		}
	})
}
