package cookies

import (
	"bytes"
	"strings"
)

// ourRules are this package's own lists, checked before the data and matched ASCII
// case-insensitively (servers are not consistent: DataDome sets "datadome", the data lists
// "Datadome"). A pattern ending in "*" is a prefix; the longest matching prefix wins and an exact
// name beats every prefix. The package documentation repeats these lists for readers of godoc;
// TestDocListsOurRules keeps the two in step.
var ourRules = []struct {
	cat      Category
	patterns []string
}{
	{Consent, []string{
		// OneTrust, Cookiebot, Didomi, IAB TCF/GPP and US privacy strings.
		"OptanonConsent", "OptanonAlertBoxClosed", "OptanonControl", "eupubconsent-v2",
		"CookieConsent", "CookieConsentBulkTicket", "CookieConsentBulkSetting-*",
		"euconsent", "euconsent-v2", "didomi_token", "__gpp", "__gpp_sid", "addtl_consent", "usprivacy",
		// Complianz, Borlabs, Usercentrics, TrustArc, Sourcepoint, consentmanager.net, iubenda,
		// Termly, CookieYes, Osano, Cookie Law Info, Moove, Axeptio, Cookie Notice, orestbida's
		// cookieconsent, tarteaucitron, Klaro.
		"cmplz_*", "complianz_*", "borlabs-cookie*", "uc_settings", "uc_user_interaction", "uc_gcm",
		"notice_*", "cmapi_*", "TAconsentID", "_sp_v1_*", "_sp_su", "consentUUID", "__cmp*",
		"_iub_cs-*", "__tltpl_*", "__tlbcpv", "__tluid", "cky-consent", "cky-action", "cookieyes-*",
		"osano_consentmanager*", "cookielawinfo-*", "viewed_cookie_policy", "cli_user_preference",
		"moove_gdpr_popup", "axeptio_*", "cookie_notice_accepted", "cc_cookie", "tarteaucitron",
		"klaro",
	}},
	{AntiBot, []string{
		// Cloudflare (its load-balancer cookie __cflb is below), Akamai Bot Manager, DataDome,
		// Imperva/Incapsula, Kasada, PerimeterX/HUMAN, AWS WAF, DDoS-Guard, Radware, Reblaze,
		// reCAPTCHA.
		"cf_clearance", "__cf_bm", "__cfruid", "_cfuvid", "__cfduid", "__cfseq", "__cfwaitingroom",
		"cf_chl_*", "cf_ob_info", "cf_use_ob",
		"_abck", "bm_sz", "bm_sv", "bm_mi", "bm_so", "bm_s", "ak_bmsc", "sec_cpt",
		"datadome", "incap_ses_*", "visid_incap_*", "nlbi_*", "reese84", "KP_UIDz*",
		"_px*", "aws-waf-token", "__ddg*", "__uzm*", "rbzid", "rbzsessionid", "_GRECAPTCHA",
	}},
	{Login, []string{
		// WordPress (the auth cookie itself is "wordpress_<hash>"), Drupal, Rails/Devise, Laravel,
		// Keycloak, Auth0, NextAuth.js, GitHub-style session logins, phpMyAdmin.
		"wordpress_*", "wordpress_logged_in_*", "wordpress_sec_*", "wordpressuser_*",
		"wordpresspass_*", "wp-postpass_*", "remember_user_token", "remember_web_*",
		"remember_token", "remember_me", "KEYCLOAK_*", "AUTH_SESSION_ID*", "KC_*", "auth0*",
		"next-auth.session-token", "__Secure-next-auth.session-token", "user_session",
		"__Host-user_session_same_site", "logged_in", "pmaAuth-*", "pmaUser-*",
		// Auth.js, ASP.NET Forms and Core Identity, Nuxt auth, Tomcat single sign-on,
		// mod_auth_openidc.
		"authjs.session-token", "__Secure-authjs.session-token", ".ASPXAUTH", ".AspNetCore.Cookies",
		".AspNetCore.Identity.Application", "auth._token.*", "auth._refresh_token.*",
		"JSESSIONIDSSO", "mod_auth_openidc_session",
	}},
	{Paywall, []string{
		// Piano/Tinypass, Zephr, Poool, the New York Times meter.
		"__tbc", "xbc", "__tac", "__pls", "__utp", "__pnahc", "__pvi", "__pat", "__pil", "_pcid",
		"_pctx", "_pprv", "_pc_*", "__pianoParams", "blaize_*", "_poool*", "nyt-m", "paywall*",
	}},
	{Session, []string{
		"PHPSESSID", "__Secure-PHPSESSID", "JSESSIONID*", "ASP.NET_SessionId", "ASPSESSIONID*",
		"CFID", "CFTOKEN", "sessionid", "connect.sid", "laravel_session", "ci_session",
		"rack.session", "_session_id", "_rails_session", "SESSION", "CGISESSID", "CAKEPHP",
		// Generic names (the data files Google's SID and Adform's token as Marketing; on a site
		// a crawler visits they are that site's session; "session" of Flask, Pyramid and Gorilla is
		// SESSION above, as matching ignores case), Express
		// cookie-session, Koa, Sails, Play, Symfony 1, ASP.NET Core, Odoo/web.py, XenForo.
		"sid", "token", "express:sess", "express:sess.sig", "koa.sess", "koa:sess",
		"koa.sess.sig", "koa:sess.sig", "sails.sid", "PLAY_SESSION", "symfony",
		".AspNetCore.Session", "session_id", "xf_session",
	}},
	{LoadBalancer, []string{
		"AWSALB", "AWSALBCORS", "AWSALBTG", "AWSALBTGCORS", "AWSALBAPP-*", "AWSELB", "AWSELBCORS",
		"ARRAffinity", "ARRAffinitySameSite", "ASLBSA", "ASLBSACORS", "BIGipServer*", "NSC_*",
		"SERVERID", "__cflb", "GCLB", "INGRESSCOOKIE", "ROUTEID", "route", "AlteonP*",
		"X-Mapping-*",
	}},
	{CSRF, []string{
		"csrftoken", "XSRF-TOKEN", "CSRF-TOKEN", "_csrf", "_csrf_token", "csrf_token", "_xsrf",
		"__RequestVerificationToken*", ".AspNetCore.Antiforgery.*", "next-auth.csrf-token",
		"__Host-next-auth.csrf-token", "authjs.csrf-token", "csrf_cookie_name",
	}},
}

// ourShapes are session names with a part that varies in the middle or a generated tail, which
// neither an exact name nor a prefix can express: Rails names its session "_<app>_session",
// Phoenix "_<app>_key", Drupal "SESS<hash>" (SSESS over https). They are matched ASCII
// case-insensitively after the data's exact names, and against the data's prefixes by length:
// the longer literal part wins, so "_ga_session" is a session (9 literal characters against
// Google's "_ga_") while a vendor's 20-character prefix ending in "_session" stays the vendor's.
// A data exact name wins unless the data files it as Functional, Security or Necessary — what
// the data calls a site's own session ("_zendesk_session") is a session, what it calls a
// tracker ("_Brochure_session", Analytics) stays one.
var ourShapes = []shape{
	{pattern: "_*_session", prefix: "_", suffix: "_session"},
	{pattern: "_*_key", prefix: "_", suffix: "_key"},
	{pattern: "SESS<hex>", prefix: "sess", hex: true},
	{pattern: "SSESS<hex>", prefix: "ssess", hex: true},
}

// shape is a prefix and a suffix (lower case) around a middle part: any non-empty text, or with
// hex at least minHex hexadecimal digits and nothing after them.
type shape struct {
	pattern        string // as the documentation writes it, for Match.Pattern
	prefix, suffix string
	hex            bool
}

// minHex is the fewest hex digits a Drupal session name carries after SESS (it carries 32).
const minHex = 16

// literal is how many characters of a name the shape fixes, compared with a data prefix's length.
func (s shape) literal() int { return len(s.prefix) + len(s.suffix) }

// matches reports whether the lower-cased name has the shape.
func (s shape) matches(folded []byte) bool {
	n := len(folded)
	if n <= s.literal() || !bytes.HasPrefix(folded, []byte(s.prefix)) || !bytes.HasSuffix(folded, []byte(s.suffix)) {
		return false
	}
	if !s.hex {
		return true
	}
	mid := folded[len(s.prefix) : n-len(s.suffix)]
	if len(mid) < minHex {
		return false
	}
	for _, c := range mid {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// matchShape returns the first shape the lower-cased name has.
func matchShape(folded []byte) (shape, bool) {
	for _, s := range ourShapes {
		if s.matches(folded) {
			return s, true
		}
	}
	return shape{}, false
}

// consentWord is our substring rule: a name containing "consent" (any case) is a consent cookie
// even when no list names it, because consent managers keep inventing names and mistaking one for
// something keepable would store a consent choice.
var consentWord = []byte("consent")

// Platform rules: a data entry from one of these platforms that the data files as Functional,
// Security or Necessary is reclassified, since those vendors' cookies exist to record consent, to
// fingerprint clients for bot detection, or to hold a login. Entries already filed as Analytics,
// Marketing or Personalization keep their category.
var platformRules = map[string]Category{
	"OneTrust": Consent, "Cookiebot": Consent, "Didomi": Consent, "Consentmanager.net": Consent,
	"Iubenda": Consent, "Termly": Consent, "CookieYes": Consent, "Osano": Consent,
	"CookieConsent.io": Consent, "PrivacyPillar": Consent, "QookieQloud": Consent,
	"Borlabs": Consent, "Complianz": Consent, "Cookie Law Info": Consent, "Maxlead": Consent,
	"Axeptio": Consent, "Moove": Consent, "Cookie First": Consent, "Cookie Script": Consent,
	"Enzuzo": Consent, "Hu-manity.co": Consent, "AWS Cookies Popup": Consent,

	"Akamai Botmanager": AntiBot, "Datadome": AntiBot, "Imperva": AntiBot, "Cloudflare": AntiBot,
	"CloudFlare": AntiBot, "Google reCAPTCHA": AntiBot, "CHEQ AI Technologies": AntiBot,

	"Keycloak": Login, "Auth0": Login, "NextAuth.js": Login, "Devise (Ruby on Rails)": Login,
	"Clerk": Login, "Supabase": Login, "WP-Glogin": Login, "phpMyAdmin": Login,
}

type ourEntry struct {
	cat     Category
	pattern string // as written in ourRules, for Match.Pattern
}

// ourTable is ourRules compiled: lower-cased keys, prefixes without their "*".
type ourTable struct {
	exact   map[string]ourEntry
	prefix  map[string]ourEntry
	lengths []int // distinct prefix lengths, longest first
}

func compileOurRules() ourTable {
	t := ourTable{exact: map[string]ourEntry{}, prefix: map[string]ourEntry{}}
	seen := map[int]bool{}
	for _, r := range ourRules {
		for _, p := range r.patterns {
			key := strings.ToLower(p)
			if strings.HasSuffix(key, "*") {
				key = strings.TrimSuffix(key, "*")
				t.prefix[key] = ourEntry{r.cat, p}
				if !seen[len(key)] {
					seen[len(key)] = true
					t.lengths = append(t.lengths, len(key))
				}
				continue
			}
			t.exact[key] = ourEntry{r.cat, p}
		}
	}
	sortDesc(t.lengths)
	return t
}

func sortDesc(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] > s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
