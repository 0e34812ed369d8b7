import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import TesseraTokens
import Testing

@testable import TesseraServer

/// A browser over HummingbirdTesting's client: keeps the console's cookies and reads the CSRF token
/// of the last page's forms.
final class ConsoleBrowser: Sendable {
    let api: APIClient
    private let state = Mutex<(cookies: [String: String], csrf: String?)>(([:], nil))

    init(_ api: APIClient) { self.api = api }

    struct Page: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let html: String

        var location: String? { headers[.location] }
        /// The `data-code` of the page's error, if it shows one.
        var errorCode: String? { Self.first(#"data-code="([^"]+)""#, in: html) }

        static func first(_ pattern: String, in text: String) -> String? {
            guard let expression = try? NSRegularExpression(pattern: pattern),
                let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                let range = Range(match.range(at: 1), in: text)
            else { return nil }
            return String(text[range])
        }
    }

    var csrf: String { state.withLock { $0.csrf ?? "" } }

    func cookie(_ name: String) -> String? { state.withLock { $0.cookies[name] } }

    @discardableResult
    func get(_ path: String) async throws -> Page {
        try await send(.get, path, body: nil)
    }

    /// Posts a form; the page's CSRF token is added unless `csrf` is given.
    @discardableResult
    func post(_ path: String, _ fields: [(String, String)], csrf: String? = nil) async throws -> Page {
        let all = [("csrf", csrf ?? self.csrf)] + fields
        let body = all.map { "\(ConsoleURL.encode($0.0))=\(ConsoleURL.encode($0.1))" }.joined(separator: "&")
        return try await send(.post, path, body: body)
    }

    private func send(_ method: HTTPRequest.Method, _ path: String, body: String?) async throws -> Page {
        var headers = HTTPFields()
        let cookies = state.withLock { $0.cookies }
        if !cookies.isEmpty {
            headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")
        }
        if body != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        let page = try await api.client.execute(
            uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { response in
            Page(status: response.status, headers: response.headers, html: String(buffer: response.body))
        }
        state.withLock { state in
            for header in page.headers[values: .setCookie] {
                let pair = header.split(separator: ";")[0]
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let name = String(pair[..<equals])
                let value = String(pair[pair.index(after: equals)...])
                if value.isEmpty || header.contains("Max-Age=0") {
                    state.cookies[name] = nil
                } else {
                    state.cookies[name] = value
                }
            }
            if let token = Page.first(#"name="csrf" value="([^"]+)""#, in: page.html) { state.csrf = token }
        }
        return page
    }
}

/// Makes an operator who has enrolled with `password`, and signs a browser in as them.
func signedInBrowser(
    _ environment: TestEnvironment, _ api: APIClient, role: OperatorRole, password: String = "correct horse battery"
) async throws -> (ConsoleBrowser, OperatorRecord) {
    let accounts = OperatorAccounts(store: environment.store, now: { environment.clock.now }, bcryptCost: 4)
    let email = "\(role.rawValue)-\(UUID().uuidString.prefix(6).lowercased())@example.com"
    let (account, token) = try await accounts.create(email: email, role: role)
    let browser = ConsoleBrowser(api)
    let enrollment = try await browser.get("/console/enroll?token=\(token)")
    #expect(enrollment.status == .ok)
    let enrolled = try await browser.post(
        "/console/enroll", [("token", token), ("password", password), ("password_confirmation", password)])
    #expect(enrolled.status == .seeOther, "\(enrolled.html)")
    try await browser.get("/console/login")
    let login = try await browser.post("/console/login", [("email", email), ("password", password)])
    #expect(login.status == .seeOther)
    #expect(login.location == "./")
    return (browser, account)
}

/// Runs `body` against an application on SQLite with an operator of `role` signed in to the console:
/// the environment, the API client, the operator's browser and account.
func withConsole(
    role: OperatorRole,
    _ body: @escaping @Sendable (TestEnvironment, APIClient, ConsoleBrowser, OperatorRecord) async throws -> Void
) async throws {
    try await TestEnvironment.withApp(backend: .sqlite) { environment, api in
        let (browser, account) = try await signedInBrowser(environment, api, role: role)
        try await body(environment, api, browser, account)
    }
}

@Suite("Console: HTML builder, forms and links")
struct ConsoleHTMLTests {
    @Test("Text and attribute values are escaped; markup only from static strings")
    func escaping() {
        var html = HTML()
        html.element("p", [("title", "\"><script>")], text: "<b>&'")
        #expect(
            String(decoding: html.bytes, as: UTF8.self)
                == "<p title=\"&quot;&gt;&lt;script&gt;\">&lt;b&gt;&amp;&#39;</p>")
    }

    @Test("Links are relative and percent-encode their query values")
    func links() {
        #expect(ConsoleURL("profile", [("id", "usr_1")]).relative == "profile?id=usr_1")
        #expect(ConsoleURL("search", [("q", "a b&c=/é")]).relative == "search?q=a%20b%26c%3D%2F%C3%A9")
        #expect(ConsoleURL("").relative == "./")
        #expect(ConsoleURL("profiles", [("kind", nil)]).relative == "profiles")
    }

    @Test("Forms decode +, percent escapes and UTF-8; broken escapes are refused")
    func forms() {
        let form = ConsoleForm(urlEncoded: Array("a=1+2&b=%C3%A9%26&a=3&c".utf8))
        #expect(form?["a"] == "1 2")
        #expect(form?["b"] == "é&")
        #expect(form?["c"] == "")
        #expect(ConsoleForm(urlEncoded: Array("a=%G1".utf8)) == nil)
        #expect(ConsoleForm(urlEncoded: Array("a=%C3".utf8)) == nil)
        #expect(ConsoleForm(urlEncoded: Array("a=%4".utf8)) == nil)
    }

    @Test("Viewers see emails masked")
    func masking() {
        #expect(ConsoleViewer.mask("jane@example.com") == "j•••@example.com")
        #expect(ConsoleViewer.mask("@x") == "•••")
    }
}

@Suite("Console: pages, sessions, roles and actions")
struct ConsoleTests {
    @Test("Signed out: /console redirects to console/, pages to login; the login page sets a form token")
    func signedOut() async throws {
        // Live: a real HTTP/1.1 request to a loopback host, whose cookies must not be Secure.
        try await TestEnvironment.withApp(backend: .sqlite, .live) { _, api in
            let browser = ConsoleBrowser(api)
            let root = try await browser.get("/console")
            #expect(root.status == .seeOther)
            #expect(root.location == "console/")
            let overview = try await browser.get("/console/")
            #expect(overview.status == .seeOther)
            #expect(overview.location == "login")
            let login = try await browser.get("/console/login")
            #expect(login.status == .ok)
            #expect(login.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            #expect(login.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(login.headers[.cacheControl] == "no-store")
            #expect(login.headers[.xFrameOptions] == "DENY")
            let cookie = login.headers[.setCookie] ?? ""
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            // Plain HTTP at a loopback host: no Secure, or the browser would drop the cookie.
            #expect(!cookie.contains("Secure"))
            #expect(browser.cookie(ConsoleHTTP.formCookie) == browser.csrf)
            let css = try await browser.get("/console/assets/console.css")
            #expect(css.status == .ok && css.headers[.contentType]?.hasPrefix("text/css") == true)
        }
    }

    @Test("Sign-in: a wrong password, a missing form token and an unknown email all fail the same way")
    func signIn() async throws {
        try await withConsole(role: .viewer) { environment, api, _, account in
            let browser = ConsoleBrowser(api)
            try await browser.get("/console/login")
            let wrong = try await browser.post(
                "/console/login", [("email", account.email), ("password", "nope nope nope")])
            #expect(wrong.status == .unauthorized)
            #expect(wrong.errorCode == "invalid_login")
            #expect(browser.cookie(ConsoleHTTP.sessionCookie) == nil)
            let unknown = try await browser.post(
                "/console/login", [("email", "nobody@example.com"), ("password", "correct horse battery")])
            #expect(unknown.errorCode == "invalid_login")
            let forged = try await browser.post(
                "/console/login", [("email", account.email), ("password", "correct horse battery")], csrf: "forged")
            #expect(forged.status == .forbidden)
            #expect(forged.errorCode == "csrf_token_invalid")
            #expect(browser.cookie(ConsoleHTTP.sessionCookie) == nil)
        }
    }

    @Test("Search resolves every kind of identifier to its profile page")
    func search() async throws {
        try await withConsole(role: .viewer) { environment, api, browser, _ in
            let installationID = UUID().uuidString.lowercased()
            let anonymous = try await api.anonymous(installationID: installationID)
            let token = environment.identityToken(sub: "user-42", email: "jane@example.com")
            let identified = try await api.identify(token: token, bearer: anonymous.sessionToken)
            let profileID = try #require(identified.profileID)
            let device = try await api.registerDevice(
                bearer: identified.sessionToken, platform: "apns", token: "a1b2c3")
            let deviceID = try #require(device["device"]["id"] as? String)
            for query in [
                profileID, try #require(identified.sessionID), deviceID, installationID, "user-42", "jane@example.com",
            ] {
                let found = try await browser.get("/console/search?q=\(ConsoleURL.encode(query))")
                #expect(found.status == .seeOther, "\(query)")
                #expect(found.location == "profile?id=\(profileID)", "\(query)")
            }
            let missing = try await browser.get("/console/search?q=nothing-here")
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "not_found")
            let page = try await browser.get("/console/profile?id=\(profileID)")
            #expect(page.status == .ok)
            #expect(page.html.contains(deviceID))
            // A viewer sees the email masked.
            #expect(page.html.contains("j•••@example.com"))
            #expect(!page.html.contains("jane@example.com"))
        }
    }

    @Test("Support ends a session: the session is refused at once; CSRF and roles are enforced")
    func revoke() async throws {
        try await withConsole(role: .support) { environment, api, support, _ in
            let (viewer, _) = try await signedInBrowser(environment, api, role: .viewer)
            let anonymous = try await api.anonymous()
            let profileID = try #require(anonymous.profileID)
            let sessionID = try #require(anonymous.sessionID)
            try await viewer.get("/console/profile?id=\(profileID)")
            let refused = try await viewer.post(
                "/console/revoke-session", [("profile_id", profileID), ("session_id", sessionID)])
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "operator_forbidden")
            try await support.get("/console/profile?id=\(profileID)")
            let forged = try await support.post(
                "/console/revoke-session", [("profile_id", profileID), ("session_id", sessionID)], csrf: "x")
            #expect(forged.errorCode == "csrf_token_invalid")
            let alive = try await api.send(.post, "/v1/sessions/authenticate", bearer: anonymous.sessionToken)
            #expect(alive.status == .ok, "neither refused action changed anything")
            let done = try await support.post(
                "/console/revoke-session", [("profile_id", profileID), ("session_id", sessionID)])
            #expect(done.status == .seeOther)
            let after = try await api.send(.post, "/v1/sessions/authenticate", bearer: anonymous.sessionToken)
            #expect(after.status == .unauthorized)
            let audit = try await environment.store.auditEvents(
                projectID: environment.project.project.id, before: nil, limit: 10)
            #expect(audit.first?.type == "session.ended")
            #expect(audit.first?.actor.kind == .operator)
        }
    }

    @Test("Block and erase need the operator's password, erase the typed profile ID")
    func blockAndErase() async throws {
        try await withConsole(role: .admin) { environment, api, admin, _ in
            let anonymous = try await api.anonymous()
            let profileID = try #require(anonymous.profileID)
            try await admin.get("/console/profile?id=\(profileID)")
            let noPassword = try await admin.post(
                "/console/block", [("profile_id", profileID), ("reason", "abuse"), ("password", "wrong password!")])
            #expect(noPassword.status == .forbidden)
            #expect(noPassword.errorCode == "operator_password_wrong")
            let blocked = try await admin.post(
                "/console/block",
                [("profile_id", profileID), ("reason", "abuse"), ("password", "correct horse battery")])
            #expect(blocked.status == .seeOther)
            #expect(
                try await environment.store.profile(projectID: environment.project.project.id, id: profileID)?.blocked
                    == true)
            let audit = try await environment.store.auditEvents(
                projectID: environment.project.project.id, before: nil, limit: 10)
            let block = try #require(audit.first(where: { $0.type == "profile.blocked" }))
            #expect(block.reason == "abuse")
            try await admin.get("/console/profile?id=\(profileID)")
            let mistyped = try await admin.post(
                "/console/erase",
                [("profile_id", profileID), ("confirm", "usr_nope"), ("password", "correct horse battery")])
            #expect(mistyped.status == .badRequest)
            #expect(
                try await environment.store.profile(projectID: environment.project.project.id, id: profileID) != nil)
            let erased = try await admin.post(
                "/console/erase",
                [("profile_id", profileID), ("confirm", profileID), ("password", "correct horse battery")])
            #expect(erased.status == .seeOther)
            #expect(
                try await environment.store.profile(projectID: environment.project.project.id, id: profileID) == nil)
        }
    }

    @Test("Settings show a diff first and save on confirmation; a stale form is refused")
    func settings() async throws {
        try await withConsole(role: .admin) { environment, api, admin, _ in
            let form = try await admin.get("/console/settings")
            let base = try #require(ConsoleBrowser.Page.first(#"name="base" value="([^"]+)""#, in: form.html))
            let fields: [(String, String)] = [
                ("base", base), ("max_identity_token_lifetime_seconds", "600"), ("leeway_seconds", "60"),
                ("anonymous_session_minutes", "525600"), ("identified_session_minutes", "43200"),
                ("anonymous_starts_per_minute", "600"), ("failed_identifies_per_minute", "60"),
                ("failed_identifies_per_installation_per_minute", "10"),
            ]
            let review = try await admin.post("/console/settings", fields)
            #expect(review.status == .ok)
            #expect(review.html.contains("<del>3600</del>") && review.html.contains("<ins>600</ins>"))
            #expect(
                try await environment.store.project(id: environment.project.project.id)?.settings
                    .maxIdentityTokenLifetimeSeconds == 3600)
            let saved = try await admin.post("/console/settings", fields + [("confirm", "1")])
            #expect(saved.status == .seeOther)
            #expect(
                try await environment.store.project(id: environment.project.project.id)?.settings
                    .maxIdentityTokenLifetimeSeconds == 600)
            let invalid = try await admin.post("/console/settings", [("base", base), ("leeway_seconds", "9999")])
            #expect(invalid.status == .badRequest || invalid.status == .conflict)
        }
    }

    @Test("Keys: the publishable key is shown once when rotated; the secret key never reaches the page")
    func keys() async throws {
        try await withConsole(role: .admin) { environment, api, admin, _ in
            let page = try await admin.get("/console/keys")
            #expect(page.status == .ok)
            #expect(!page.html.contains(environment.project.secretKey))
            #expect(!page.html.contains(environment.project.identitySecret.value))
            let secret = try await admin.post(
                "/console/rotate-api-key",
                [("kind", "secret"), ("grace_seconds", "0"), ("password", "correct horse battery")])
            #expect(secret.status == .forbidden, "an admin may not rotate the secret key; an owner may")
            let rotated = try await admin.post(
                "/console/rotate-api-key",
                [("kind", "publishable"), ("grace_seconds", "0"), ("password", "correct horse battery")])
            #expect(rotated.status == .seeOther)
            let landed = try await admin.get("/console/\(try #require(rotated.location))")
            let key = try #require(ConsoleBrowser.Page.first(#"id="revealed-key">([^<]+)<"#, in: landed.html))
            #expect(key.hasPrefix("pk_"))
            let old = try await api.anonymous()
            #expect(old.status == .unauthorized, "the old publishable key stopped at once (grace 0)")
        }
    }

    @Test("Values from the database are text on the page, never markup")
    func escapesData() async throws {
        try await withConsole(role: .owner) { environment, api, browser, _ in
            _ = try await api.allowUnverifiedIdentify()
            let anonymous = try await api.anonymous()
            let identified = try await api.identify(userID: "<script>alert(1)</script>", bearer: anonymous.sessionToken)
            let profileID = try #require(identified.profileID)
            let page = try await browser.get("/console/profile?id=\(profileID)")
            #expect(page.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!page.html.contains("<script>alert"))
        }
    }

    @Test("The overview never waits for a count: the first view says it is counting, a later one shows the counts")
    func overviewCounts() async throws {
        let cache = BackgroundCountsCache<ProjectCounts>()
        let first = cache.get(projectID: "prj_1", now: 100) {
            try await Task.sleep(for: .milliseconds(50))
            var counts = ProjectCounts(
                profiles: 0, anonymousProfiles: 0, identifiedProfiles: 0, blockedProfiles: 0, liveSessions: 0)
            counts.profiles = 7
            return counts
        }
        #expect(first == nil)
        await cache.settled(projectID: "prj_1")
        #expect(cache.get(projectID: "prj_1", now: 101) { throw CoreError.unavailable }?.value.profiles == 7)
        // Older than a minute: the stale counts are shown while a recount runs (here it fails: they stay).
        #expect(cache.get(projectID: "prj_1", now: 200) { throw CoreError.unavailable }?.value.profiles == 7)
        await cache.settled(projectID: "prj_1")
        #expect(cache.get(projectID: "prj_1", now: 201) { throw CoreError.unavailable }?.at == 100)
        try await withConsole(role: .viewer) { environment, api, browser, _ in
            _ = try await api.anonymous()
            let page = try await browser.get("/console/")
            #expect(page.status == .ok)
            #expect(page.html.contains("Counting"))
            try await Task.sleep(for: .milliseconds(300))
            let later = try await browser.get("/console/")
            #expect(later.html.contains("Live sessions"))
        }
    }

    @Test("--console off: no console routes")
    func off() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite) { $0.consoleEnabled = false }
        try await environment.withApp { api in
            let reply = try await api.send(.get, "/console/login")
            #expect(reply.status == .notFound)
        }
    }
}
