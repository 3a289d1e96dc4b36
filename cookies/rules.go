package cookies

import "strings"

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
		"wordpresspass_*", "wp-postpass_*", "SSESS*", "remember_user_token", "remember_web_*",
		"remember_token", "remember_me", "KEYCLOAK_*", "AUTH_SESSION_ID*", "KC_*", "auth0*",
		"next-auth.session-token", "__Secure-next-auth.session-token", "user_session",
		"__Host-user_session_same_site", "logged_in", "pmaAuth-*", "pmaUser-*",
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
		"__Host-next-auth.csrf-token",
	}},
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
