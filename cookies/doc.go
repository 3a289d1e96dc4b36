// Package cookies classifies cookie names and keeps the few cookies a declared purpose needs.
//
// A crawler needs no cookies by default, and the door runs without a jar. When a task does need
// some — a site that will not serve pages without an anonymous session, a load balancer that
// misroutes without stickiness, a form that needs its CSRF token, a members area the operator was
// given credentials for ([Purpose.Login]) — the caller declares a
// [Purpose] and gets a [Jar] from [NewJar]: a strict [net/http.CookieJar] that keeps only those
// cookies, as session cookies, in memory, per origin, and refuses everything else visibly.
//
// Most users never call NewJar: they set politeness.Policy.Cookies to a Purpose and the door
// builds the jar, files every answer's Set-Cookie through it and reports the refusals (in its
// events, and so in package report). [Classify] answers "what is this cookie for?" on its own.
//
// One taxonomy serves both sides: [Category] is what the classifier says a cookie is for, and a
// Purpose declares the categories it needs from the three that can be declared (Session,
// LoadBalancer, CSRF; [Category.Declarable]). A separate "purpose class" type would repeat those
// three names and need a mapping that could drift; with one type, the name in a Refusal, in the
// refusal counts and in configuration read with [ParseCategories] is the same word.
//
// # Classification
//
// [Lookup] (and its shorthand [Classify]) names a cookie's [Category] from the Open Cookie
// Database (vendored in data/, Apache-2.0; commit and sha256 in data/PROVENANCE.md and as
// [DataCommit], [DataSHA256]) and from our own lists, which come first because the data files
// most consent, anti-bot and login cookies as "Functional", files some framework session names
// under a vendor that uses the same name (Google's SID, Adform's token, Instagram's sessionid), and
// has no Session, LoadBalancer or CSRF category. Order:
//
//  1. our exact names, then our longest prefix (ASCII case-insensitive);
//  2. our substring rule: a name containing "consent", in any case, is a consent cookie;
//  3. the data's exact name, case-sensitively (cookie names are case-sensitive, RFC 6265 §5.3),
//     then case-folded, so "datadome" finds the data's "Datadome" — except that a name of one of
//     our session shapes (below) that the data files as Functional, Security or Necessary is a
//     Session cookie ("_zendesk_session"), while one it files as a tracker stays a tracker
//     ("_Brochure_session", Analytics);
//  4. our session shapes and the data's longest prefix ("Wildcard match" = 1, case-sensitively,
//     under the short-prefix rule below): the one fixing more characters of the name wins, a tie
//     going to the shape — so "_ga_session" is a Rails session, not Google's "_ga_" prefix;
//  5. a name with the "__Host-" or "__Secure-" prefix that nothing matched is looked up again
//     without it, in our lists only (steps 1, 2 and the shapes): "__Host-sid" is a session;
//  6. otherwise Unknown.
//
// Exact beats prefix and shape, and the longest prefix wins, so the few session shapes cannot
// claim a name the data knows as a tracker.
//
// Data quirks and how the loader settles them ([Data] reports the counts): placeholders at the end
// of a name (NNN, *, %INTEGER%) make it a prefix ("pm_sess_NNN" is the prefix "pm_sess_"); a tab
// and a soft hyphen inside names are removed; duplicate names and case-folded collisions resolve
// to the more restrictive category (Marketing, then Analytics, Personalization, the never-kept
// categories of ours, Functional, Security, Necessary); rows with a category outside the known six are
// skipped (their names stay Unknown, so refused unless allow-listed).
//
// The short-prefix rule: a data prefix of three characters or fewer ([ShortPrefixLen]) matches
// only when it ends in a separator (_ - . : /), when it is the whole name, or when the rest of the
// name does not begin with an ASCII letter. So Marfeel's "_s" does not tag "_session" (which the
// data does not list) as Analytics, Adform's "CT" does not tag "CTX", and "SR12345" or
// "mp_<token>_mixpanel" still match. Exact beats prefix and the longest prefix wins, but those two
// rules alone cannot tell a vendor's two-letter namespace from the start of an unrelated word.
//
// Platform rules: data entries from consent managers (OneTrust, Cookiebot, Didomi, Complianz,
// Borlabs, consentmanager.net, iubenda, Termly, CookieYes, Osano, Cookie Law Info, Axeptio, …)
// become Consent; from bot managers (Cloudflare, Imperva, Akamai Bot Manager, DataDome, reCAPTCHA,
// CHEQ) AntiBot; from login services (Keycloak, Auth0, NextAuth.js, Devise, Clerk, Supabase,
// phpMyAdmin) Login — unless the data already files them as Analytics, Marketing or
// Personalization.
//
// Our session shapes (matched ASCII case-insensitively): _*_session (Rails: _<app>_session),
// _*_key (Phoenix: _<app>_key), SESS<hex> and SSESS<hex> (Drupal, over http and https: the
// prefix and at least 16 hex digits of a hash).
//
// Our lists (a trailing * is a prefix):
//
//   - consent: OptanonConsent, OptanonAlertBoxClosed, OptanonControl, eupubconsent-v2,
//     CookieConsent, CookieConsentBulkTicket, CookieConsentBulkSetting-*, euconsent,
//     euconsent-v2, didomi_token, __gpp, __gpp_sid, addtl_consent, usprivacy, cmplz_*,
//     complianz_*, borlabs-cookie*, uc_settings, uc_user_interaction, uc_gcm, notice_*, cmapi_*,
//     TAconsentID, _sp_v1_*, _sp_su, consentUUID, __cmp*, _iub_cs-*, __tltpl_*, __tlbcpv,
//     __tluid, cky-consent, cky-action, cookieyes-*, osano_consentmanager*, cookielawinfo-*,
//     viewed_cookie_policy, cli_user_preference, moove_gdpr_popup, axeptio_*,
//     cookie_notice_accepted, cc_cookie, tarteaucitron, klaro, and any name containing "consent".
//   - anti-bot: cf_clearance, __cf_bm, __cfruid, _cfuvid, __cfduid, __cfseq, __cfwaitingroom,
//     cf_chl_*, cf_ob_info, cf_use_ob, _abck, bm_sz, bm_sv, bm_mi, bm_so, bm_s, ak_bmsc, sec_cpt,
//     datadome, incap_ses_*, visid_incap_*, nlbi_*, reese84, KP_UIDz*, _px*, aws-waf-token,
//     __ddg*, __uzm*, rbzid, rbzsessionid, _GRECAPTCHA.
//   - login: wordpress_* (the auth cookie is wordpress_<hash>), wordpress_logged_in_*,
//     wordpress_sec_*, wordpressuser_*, wordpresspass_*, wp-postpass_*,
//     remember_user_token, remember_web_*, remember_token, remember_me, KEYCLOAK_*,
//     AUTH_SESSION_ID*, KC_*, auth0*, next-auth.session-token,
//     __Secure-next-auth.session-token, user_session, __Host-user_session_same_site, logged_in,
//     pmaAuth-*, pmaUser-*, authjs.session-token, __Secure-authjs.session-token, .ASPXAUTH,
//     .AspNetCore.Cookies, .AspNetCore.Identity.Application, auth._token.* and
//     auth._refresh_token.* (Nuxt auth), JSESSIONIDSSO (Tomcat single sign-on),
//     mod_auth_openidc_session.
//   - paywall (meters and entitlement): __tbc, xbc, __tac, __pls, __utp, __pnahc, __pvi, __pat,
//     __pil, _pcid, _pctx, _pprv, _pc_*, __pianoParams (Piano/Tinypass), blaize_* (Zephr),
//     _poool* (Poool), nyt-m, paywall*.
//   - session: PHPSESSID, __Secure-PHPSESSID, JSESSIONID*, ASP.NET_SessionId, ASPSESSIONID*,
//     CFID, CFTOKEN, sessionid (Django's default; the data files it as Instagram's Marketing
//     cookie, and our list wins), connect.sid, laravel_session, ci_session, rack.session,
//     _session_id, _rails_session, SESSION (Spring Session; also Flask's, Pyramid's and
//     Gorilla's "session", as matching ignores case), CGISESSID, CAKEPHP, sid (the data's SID is
//     Google's Marketing cookie, and our list wins), token (likewise Adform's), express:sess,
//     express:sess.sig (Express cookie-session), koa.sess, koa:sess, koa.sess.sig, koa:sess.sig,
//     sails.sid, PLAY_SESSION, symfony (Symfony 1; later Symfony uses PHPSESSID),
//     .AspNetCore.Session, session_id (Odoo, web.py), xf_session (XenForo); and the shapes
//     above.
//   - loadbalancer: AWSALB, AWSALBCORS, AWSALBTG, AWSALBTGCORS, AWSALBAPP-*, AWSELB, AWSELBCORS,
//     ARRAffinity, ARRAffinitySameSite, ASLBSA, ASLBSACORS, BIGipServer*, NSC_*, SERVERID,
//     __cflb, GCLB, INGRESSCOOKIE, ROUTEID, route, AlteonP*, X-Mapping-*.
//   - csrf: csrftoken, XSRF-TOKEN, CSRF-TOKEN, _csrf, _csrf_token, csrf_token, _xsrf,
//     __RequestVerificationToken*, .AspNetCore.Antiforgery.*, next-auth.csrf-token,
//     __Host-next-auth.csrf-token, authjs.csrf-token, csrf_cookie_name (CodeIgniter).
//
// # The jar's policy
//
// Never stored or returned, whatever the purpose allows: Analytics, Marketing, Personalization,
// Consent, AntiBot, Paywall. Session, LoadBalancer and CSRF cookies are kept when
// [Purpose.Categories] declares that category; Login cookies only for the origins of
// [Purpose.Login] (a crawler that signs in with credentials its operator was given), which also
// keep their session, CSRF and load-balancer cookies; any other name (Unknown, or filed as
// Functional, Security or Necessary) only when [Purpose.Allow] lists it. A cookie that passes is still refused when it is
// Partitioned (CHIPS: made for third-party embedding), when its Domain attribute names another
// site or a public suffix, when it is an allow-listed name the classifier does not know and is
// SameSite=None (declared for cross-site use), when it breaks the __Secure-/__Host- prefix rules,
// when it exceeds [MaxCookieSize], or when its origin already holds [Options.MaxPerOrigin]
// cookies. Kept cookies are downgraded to session cookies and end after [Options.MaxLifetime]
// (or the server's own, earlier expiry); they live in one net/http/cookiejar per origin (scheme,
// host, port), in memory, and no method exports them.
//
// Every refusal is logged at debug level (origin, name, reason, category, rule — never the value)
// and counted: [Jar.Refused], [Jar.RefusedSummary] ("analytics 3, consent 2, unknown 1").
//
// Nothing in this package, or in the project, clicks, posts or sets a consent choice: a consent
// cookie is refused like a tracker, so a crawler never claims a choice no person made.
package cookies
