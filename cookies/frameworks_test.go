package cookies

import "testing"

// TestFrameworkSessionNames: the session cookies web frameworks set by default are Session (or,
// for a cookie that only exists once someone signed in, Login), never a tracker or Unknown — a
// crawler declaring the session it needs must get it, and a login purpose must keep it.
func TestFrameworkSessionNames(t *testing.T) {
	tests := []struct {
		name, framework string
		cat             Category
	}{
		{"sid", "generic (Express apps, Hapi, many in-house stacks); the data's Google SID is Marketing", Session},
		{"token", "generic session token; the data's Adform token is Marketing", Session},
		{"_shop_session", "Rails, _<app>_session", Session},
		{"_myapp_session", "Rails", Session},
		{"_Brochure2_session", "Rails, an app name with capitals", Session},
		{"_ga_session", "Rails app named ga: the shape is longer than Google's _ga_ prefix", Session},
		{"_zendesk_session", "Rails (Zendesk): the data's Functional refined by the shape", Session},
		{"_session_id", "Rails, older default", Session},
		{"_rails_session", "Rails", Session},
		{"JSESSIONID", "Java Servlet, Tomcat, Jetty", Session},
		{"JSESSIONID.node1", "Java behind a sticky balancer", Session},
		{"PHPSESSID", "PHP, Symfony's default", Session},
		{"__Secure-PHPSESSID", "PHP, prefixed", Session},
		{"connect.sid", "Express (express-session)", Session},
		{"express:sess", "Express (cookie-session)", Session},
		{"express:sess.sig", "Express (cookie-session signature)", Session},
		{"ASP.NET_SessionId", "ASP.NET", Session},
		{".AspNetCore.Session", "ASP.NET Core", Session},
		{"ASPSESSIONIDQCRBTSDA", "classic ASP", Session},
		{"laravel_session", "Laravel", Session},
		{"sessionid", "Django", Session},
		{"session", "Flask, Pyramid, Gorilla", Session},
		{"symfony", "Symfony 1", Session},
		{"CAKEPHP", "CakePHP", Session},
		{"ci_session", "CodeIgniter", Session},
		{"rack.session", "Rack, Sinatra", Session},
		{"PLAY_SESSION", "Play", Session},
		{"SESSION", "Spring Session, Grails, Micronaut", Session},
		{"koa.sess", "Koa", Session},
		{"koa:sess", "Koa, older", Session},
		{"koa.sess.sig", "Koa signature", Session},
		{"sails.sid", "Sails", Session},
		{"_myapp_key", "Phoenix, _<app>_key", Session},
		{"CFID", "ColdFusion", Session},
		{"CFTOKEN", "ColdFusion", Session},
		{"cfid", "ColdFusion, lower case", Session},
		{"CGISESSID", "Perl CGI::Session", Session},
		{"session_id", "Odoo, web.py", Session},
		{"xf_session", "XenForo", Session},
		{"SESS0123456789abcdef0123456789abcdef", "Drupal over http", Session},
		{"SSESS0123456789abcdef0123456789abcdef", "Drupal over https", Session},
		{"__Host-sid", "a __Host- variant of a session name", Session},
		{"__Secure-session", "a __Secure- variant of a session name", Session},
		{"__Host-_shop_session", "a __Host- variant of a Rails session", Session},

		// Cookies that exist only once a user signed in: kept for a Purpose.Login origin only.
		{"wordpress_logged_in_0123abcd", "WordPress", Login},
		{"wordpress_0123abcd", "WordPress auth", Login},
		{"next-auth.session-token", "NextAuth.js", Login},
		{"__Secure-next-auth.session-token", "NextAuth.js over https", Login},
		{"authjs.session-token", "Auth.js", Login},
		{"__Secure-authjs.session-token", "Auth.js over https", Login},
		{".ASPXAUTH", "ASP.NET Forms authentication", Login},
		{".AspNetCore.Identity.Application", "ASP.NET Core Identity", Login},
		{"auth._token.local", "Nuxt auth", Login},
		{"JSESSIONIDSSO", "Tomcat single sign-on", Login},
		{"remember_user_token", "Devise", Login},
		{"user_session", "GitHub-style", Login},

		// CSRF tokens a login form needs.
		{"csrftoken", "Django", CSRF},
		{"XSRF-TOKEN", "Laravel, Angular", CSRF},
		{"authjs.csrf-token", "Auth.js", CSRF},
		{"__Host-authjs.csrf-token", "Auth.js over https", CSRF},
	}
	sessions := 0
	for _, tt := range tests {
		if got := Lookup(tt.name); got.Category != tt.cat {
			t.Errorf("%s (%s) = %s (%s %q, platform %q), want %s", tt.name, tt.framework, got.Category, got.Source, got.Pattern, got.Platform, tt.cat)
		}
		if tt.cat == Session {
			sessions++
		}
	}
	if sessions < 30 {
		t.Errorf("only %d framework session names tested; the table should name at least 30", sessions)
	}
}

// TestRefusedNamesStayRefused: no session rule may turn a tracker, a consent record, an anti-bot
// token or a paywall meter into something a purpose can keep — including names that look like a
// session (_shopify_s, _twitter_sess, _Brochure_session) and their __Host-/__Secure- variants.
func TestRefusedNamesStayRefused(t *testing.T) {
	tests := []struct {
		name string
		cat  Category
	}{
		{"_ga", Analytics}, {"_ga_ABC123", Analytics}, {"_gid", Analytics}, {"_fbp", Marketing},
		{"_gcl_au", Marketing}, {"_shopify_s", Analytics}, {"_shopify_y", Analytics},
		{"_twitter_sess", Marketing}, {"_Brochure_session", Analytics}, {"_pk_id.1.1fff", Analytics},
		{"IDE", Marketing}, {"__Secure-3PSID", Marketing},
		{"OptanonConsent", Consent}, {"CookieConsent", Consent}, {"euconsent-v2", Consent},
		{"cmplz_marketing", Consent}, {"borlabs-cookie", Consent}, {"__Secure-session_consent", Consent},
		{"cf_clearance", AntiBot}, {"__cf_bm", AntiBot}, {"_abck", AntiBot}, {"datadome", AntiBot},
		{"incap_ses_123_456", AntiBot}, {"__Host-cf_clearance", AntiBot},
		{"__tbc", Paywall}, {"_pc_x", Paywall}, {"nyt-m", Paywall}, {"paywall_meter", Paywall},
	}
	for _, tt := range tests {
		got := Lookup(tt.name)
		if got.Category != tt.cat {
			t.Errorf("%s = %s (%s %q), want %s", tt.name, got.Category, got.Source, got.Pattern, tt.cat)
		}
		if !got.Category.NeverKept() {
			t.Errorf("%s = %s: a purpose could keep it", tt.name, got.Category)
		}
	}
}
