import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import TesseraTokens
import Testing

@testable import TesseraServer

/// Every console page and its error states, rendered by the router.
@Suite("Console: every page and its error states")
struct ConsolePageTests {
    @Test("Every page renders for an owner; bad parameters and unknown targets are error pages")
    func everyPage() async throws {
        try await withConsole(role: .owner) { environment, api, browser, _ in
            let anonymous = try await api.anonymous()
            let profileID = try #require(anonymous.profileID)
            let created = try await api.admin(
                .post, "/v1/admin/webhooks", body: #"{"url": "https://example.com/hook"}"#)
            let webhookID = try #require(created["webhook"]["id"] as? String)
            let pages: [(String, String)] = [
                ("/console/", "Overview"), ("/console/profiles", "Profiles"),
                ("/console/profiles?kind=anonymous&verified=false&blocked=false", "Profiles"),
                ("/console/profile?id=\(profileID)", "Profile \(profileID)"), ("/console/sessions", "Sessions"),
                ("/console/inspector", "Identity-token inspector"), ("/console/keys", "Keys"),
                ("/console/settings", "Settings"), ("/console/webhooks", "Webhooks"),
                ("/console/webhook?id=\(webhookID)", "Webhook https://example.com/hook"),
                ("/console/audit", "Audit log"), ("/console/operators", "Operators"),
            ]
            for (path, title) in pages {
                let page = try await browser.get(path)
                #expect(page.status == .ok, "\(path)")
                #expect(page.html.contains("<h1>\(title)</h1>"), "\(path)")
                #expect(page.html.contains(#"<main id="main">"#), "\(path)")
                #expect(page.headers[.cacheControl] == "no-store", "\(path)")
            }
            let sessions = try await browser.get("/console/sessions")
            #expect(sessions.html.contains(try #require(anonymous.sessionID)))
            let errors: [(String, HTTPResponse.Status, String)] = [
                ("/console/profile?id=usr_nope", .notFound, "not_found"),
                ("/console/profile", .notFound, "not_found"),
                ("/console/profiles?kind=robot", .badRequest, "invalid_request"),
                ("/console/profiles?verified=maybe", .badRequest, "invalid_request"),
                ("/console/profiles?cursor=nope", .badRequest, "invalid_request"),
                ("/console/webhook?id=whk_nope", .notFound, "not_found"),
                ("/console/webhook?id=\(webhookID)&status=lost", .badRequest, "invalid_request"),
                ("/console/audit?cursor=x", .badRequest, "invalid_request"),
                ("/console/sessions?cursor=-1", .badRequest, "invalid_request"),
                ("/console/no-such-page", .notFound, "not_found"),
                ("/console/a/b/c", .notFound, "not_found"),
            ]
            for (path, status, code) in errors {
                let page = try await browser.get(path)
                #expect(page.status == status, "\(path)")
                #expect(page.errorCode == code, "\(path)")
                #expect(page.html.contains("Sign out"), "an error page keeps the console's frame: \(path)")
            }
            let webhook = try await browser.get("/console/search?q=\(webhookID)")
            #expect(webhook.location == "webhook?id=\(webhookID)")
        }
    }

    @Test("A profile with more live sessions than a page lists the newest and says how many there are")
    func manySessions() async throws {
        try await TestEnvironment.withApp { environment, api in
            let (browser, _) = try await signedInBrowser(environment, api, role: .viewer)
            let installationID = UUID().uuidString.lowercased()
            let secret = OpaqueToken.installationSecret()
            var last: Reply?
            for _ in 0..<(ConsoleController.rowsShown + 2) {
                last = try await api.anonymous(installationID: installationID, secret: secret)
                environment.clock.advance(seconds: 1)
            }
            let newest = try #require(last?.sessionID)
            let profileID = try #require(last?.profileID)
            let (sessions, count) = try await environment.store.newestLiveSessions(
                profileID: profileID, now: environment.clock.seconds, limit: ConsoleController.rowsShown)
            #expect(sessions.count == ConsoleController.rowsShown)
            #expect(count == ConsoleController.rowsShown + 2)
            #expect(sessions.first?.id == newest)
            let page = try await browser.get("/console/profile?id=\(profileID)")
            #expect(page.html.contains("Live sessions (\(ConsoleController.rowsShown + 2))"))
            #expect(
                page.html.contains("The \(ConsoleController.rowsShown) newest of \(ConsoleController.rowsShown + 2)"))
            #expect(page.html.contains(newest))
        }
    }

    @Test("A session's device key: bound or not, the thumbprint shortened (whole in its title) and the key tier")
    func sessionBinding() async throws {
        try await withConsole(role: .viewer) { environment, api, browser, _ in
            // (profile, session, the cell its rows must show): three bound sessions, one of each tier, and one not.
            var expected: [(String, String, String)] = []
            var keys: [String] = []
            for (tier, name) in [
                ("secure_enclave", "Secure Enclave"), ("software", "software key"), (nil, "tier not declared"),
            ] {
                let device = SessionBindingTests.Device(client: api)
                let installation =
                    #""installation_id":"\#(UUID().uuidString.lowercased())""#
                    + #","installation_secret":"\#(OpaqueToken.installationSecret())""#
                let started = try await device.send(
                    .post, "/v1/sessions/anonymous", credential: api.publishableKey, scheme: "Bearer",
                    body: "{" + installation + (tier.map { #","key_tier":"\#($0)""# } ?? "") + "}")
                #expect(started.status == .created)
                let cell = #"<code class="jkt" title="\#(device.jkt)">\#(device.jkt.prefix(10))…</code> · \#(name)"#
                expected.append((try #require(started.profileID), try #require(started.sessionID), cell))
                keys.append(device.jkt)
            }
            let unbound = try await api.anonymous()
            expected.append((try #require(unbound.profileID), try #require(unbound.sessionID), "<td>not bound</td>"))
            let sessions = try await browser.get("/console/sessions")
            for (profileID, sessionID, cell) in expected {
                let profile = try await browser.get("/console/profile?id=\(profileID)")
                for (page, name) in [(profile, "profile"), (sessions, "sessions")] {
                    #expect(page.html.contains(#"<th scope="col">Device key</th>"#), "\(name)")
                    // The session's own row shows its binding, not another session's.
                    let row = try #require(Self.row(of: sessionID, in: page.html), "\(sessionID) on \(name)")
                    #expect(row.contains(cell), "\(sessionID) on \(name): \(row)")
                }
            }
            for key in keys {
                #expect(!sessions.html.contains(">\(key)<"), "the text shows the thumbprint shortened")
            }
        }
    }

    /// The `<tr>` of the table row that names `id`.
    static func row(of id: String, in html: String) -> String? {
        html.components(separatedBy: "<tr>").first { $0.contains(">\(id)<") }?.components(separatedBy: "</tr>").first
    }

    @Test("Roles: a viewer cannot change settings, an admin cannot see operators")
    func roles() async throws {
        try await withConsole(role: .viewer) { environment, api, viewer, _ in
            let (admin, _) = try await signedInBrowser(environment, api, role: .admin)
            let settings = try await viewer.get("/console/settings")
            #expect(!settings.html.contains("Review changes"))
            let refused = try await viewer.post("/console/settings", [("leeway_seconds", "30")])
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "operator_forbidden")
            let operators = try await admin.get("/console/operators")
            #expect(operators.status == .forbidden)
            #expect(!(try await admin.get("/console/")).html.contains(">Operators<"))
        }
    }

    @Test("The inspector shows every check and identify's answer, and never writes the token back")
    func inspector() async throws {
        try await withConsole(role: .viewer) { environment, api, browser, _ in
            try await browser.get("/console/inspector")
            let good = environment.identityToken(sub: "user-7")
            let passed = try await browser.post("/console/inspector", [("token", good)])
            #expect(passed.status == .ok)
            #expect(passed.html.contains(#"data-code="ok""#))
            #expect(passed.html.contains("user-7"))
            #expect(!passed.html.contains(good))
            #expect(passed.html.contains("verdict-passed"))
            let old = environment.identityToken(sub: "user-7", lifetime: -600)
            let failed = try await browser.post("/console/inspector", [("token", old)])
            #expect(failed.html.contains(#"data-code="identity_token_expired""#))
            #expect(failed.html.contains("401 identity_token_expired"))
            #expect(failed.html.contains("verdict-failed"))
            let garbage = try await browser.post("/console/inspector", [("token", "not.a.token")])
            #expect(garbage.status == .ok)
            #expect(garbage.html.contains("verdict-failed"))
            let empty = try await browser.post("/console/inspector", [("token", "  ")])
            #expect(empty.status == .badRequest)
        }
    }

    @Test("Enrollment: an unknown link, different passwords, a short password, a wrong TOTP code")
    func enrollment() async throws {
        try await TestEnvironment.withApp(backend: .sqlite) { environment, api in
            let accounts = OperatorAccounts(store: environment.store, now: { environment.clock.now }, bcryptCost: 4)
            let (account, token) = try await accounts.create(email: "new@example.com", role: .support)
            let browser = ConsoleBrowser(api)
            let unknown = try await browser.get("/console/enroll?token=nope")
            #expect(unknown.status == .gone)
            #expect(unknown.errorCode == "enrollment_expired")
            let form = try await browser.get("/console/enroll?token=\(token)")
            let secret = try #require(ConsoleBrowser.Page.first(#"id="totp-secret">([A-Z2-7]+)<"#, in: form.html))
            // The same key as a QR code drawn on the server (the browser harness scans it).
            let uri = TOTP(secret: try #require(Base32.decode(secret))).uri(issuer: "Tessera", account: account.email)
            var expected = HTML()
            try QRCode(Array(uri.utf8)).write(
                to: &expected, pixels: 200, label: "QR code of the two-step key for \(account.email)")
            #expect(form.html.contains(String(decoding: expected.bytes, as: UTF8.self)))
            let different = try await browser.post(
                "/console/enroll",
                [("token", token), ("password", "correct horse battery"), ("password_confirmation", "other horse")])
            #expect(different.status == .badRequest)
            let short = try await browser.post(
                "/console/enroll", [("token", token), ("password", "short"), ("password_confirmation", "short")])
            #expect(short.errorCode == "weak_password")
            let wrongCode = try await browser.post(
                "/console/enroll",
                [
                    ("token", token), ("password", "correct horse battery"),
                    ("password_confirmation", "correct horse battery"), ("totp_secret", secret), ("totp", "000000"),
                ])
            #expect(wrongCode.errorCode == "invalid_totp")
            #expect(try await accounts.enrollment(token: token) != nil, "a refused form leaves the link usable")
            let totp = TOTP(secret: try #require(Base32.decode(secret)))
            let done = try await browser.post(
                "/console/enroll",
                [
                    ("token", token), ("password", "correct horse battery"),
                    ("password_confirmation", "correct horse battery"), ("totp_secret", secret),
                    ("totp", totp.code(at: environment.clock.seconds)),
                ])
            #expect(done.status == .seeOther)
            #expect(done.location == "login?notice=enrolled")
            try await browser.get("/console/login")
            let noCode = try await browser.post(
                "/console/login", [("email", account.email), ("password", "correct horse battery")])
            #expect(noCode.errorCode == "totp_required")
            environment.clock.advance(seconds: 60)
            let signedIn = try await browser.post(
                "/console/login",
                [
                    ("email", account.email), ("password", "correct horse battery"),
                    ("totp", totp.code(at: environment.clock.seconds)),
                ])
            #expect(signedIn.status == .seeOther)
            let used = try await browser.get("/console/enroll?token=\(token)")
            #expect(used.status == .gone, "the link works once")
        }
    }

    @Test("Sign-in failures are rate limited per email: 429 with Retry-After, even for the right password")
    func rateLimit() async throws {
        try await withConsole(role: .viewer) { environment, api, _, account in
            let browser = ConsoleBrowser(api)
            try await browser.get("/console/login")
            for _ in 0..<OperatorAccounts.failuresPerEmail {
                try await browser.post("/console/login", [("email", account.email), ("password", "wrong wrong wrong")])
            }
            let limited = try await browser.post(
                "/console/login", [("email", account.email), ("password", "correct horse battery")])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            #expect(limited.headers[.retryAfter] != nil)
            #expect(browser.cookie(ConsoleHTTP.sessionCookie) == nil)
        }
    }

    @Test("A wrong-password storm at actions never refuses the right password; the tenth signs out, not locks out")
    func reauthenticationLimit() async throws {
        try await withConsole(role: .admin) { environment, api, admin, account in
            let anonymous = try await api.anonymous()
            let profileID = try #require(anonymous.profileID)
            try await admin.get("/console/profile?id=\(profileID)")
            for attempt in 1..<OperatorAccounts.failuresPerOperatorAction {
                let wrong = try await admin.post(
                    "/console/block", [("profile_id", profileID), ("password", "guess guess guess")])
                #expect(wrong.status == .forbidden)
                #expect(wrong.errorCode == "operator_password_wrong", "attempt \(attempt)")
                #expect(wrong.html.contains("password is not right"))
            }
            let right = try await admin.post(
                "/console/block", [("profile_id", profileID), ("password", "correct horse battery")])
            #expect(right.status == .seeOther, "the right password after nine wrong ones")
            #expect(
                try await environment.store.profile(projectID: environment.project.project.id, id: profileID)?.blocked
                    == true)
            try await admin.get("/console/profile?id=\(profileID)")
            // The right password did not reset the count: the tenth wrong one ends this console session.
            let tenth = try await admin.post(
                "/console/erase",
                [("profile_id", profileID), ("confirm", profileID), ("password", "guess guess guess")])
            #expect(tenth.status == .seeOther)
            #expect(tenth.location == "login?notice=too-many-passwords")
            #expect(admin.cookie(ConsoleHTTP.sessionCookie) == nil)
            let browser = ConsoleBrowser(api)
            try await browser.get("/console/login")
            let signIn = try await browser.post(
                "/console/login", [("email", account.email), ("password", "correct horse battery")])
            #expect(signIn.status == .seeOther, "sign-in is never locked by wrong passwords at actions")
        }
    }

    @Test("Signing out ends the console session on the server, not only in the browser")
    func signOut() async throws {
        try await withConsole(role: .viewer) { environment, api, browser, _ in
            let cookie = try #require(browser.cookie(ConsoleHTTP.sessionCookie))
            try await browser.get("/console/")
            let out = try await browser.post("/console/logout", [])
            #expect(out.status == .seeOther)
            #expect(browser.cookie(ConsoleHTTP.sessionCookie) == nil)
            let replay = try await api.send(
                .get, "/console/", headers: [.cookie: "\(ConsoleHTTP.sessionCookie)=\(cookie)"])
            #expect(replay.status == .seeOther, "the old cookie no longer opens a page")
            #expect(replay.headers[.location] == "login")
        }
    }

    @Test("The project switcher: pages show the chosen project, and another project's profile is not found")
    func projects() async throws {
        try await TestEnvironment.withApp(backend: .sqlite) { environment, api in
            let other = try await environment.makeOtherProject()
            let (browser, _) = try await signedInBrowser(environment, api, role: .viewer)
            let anonymous = try await api.anonymous()
            let profileID = try #require(anonymous.profileID)
            let overview = try await browser.get("/console/")
            #expect(overview.html.contains(#"<select id="project""#))
            try await browser.post("/console/project", [("project_id", other.project.id)])
            let elsewhere = try await browser.get("/console/profile?id=\(profileID)")
            #expect(elsewhere.status == .notFound)
            let bogus = try await browser.post("/console/project", [("project_id", "prj_nope")])
            #expect(bogus.status == .badRequest)
            try await browser.post("/console/project", [("project_id", environment.project.project.id)])
            #expect(try await browser.get("/console/profile?id=\(profileID)").status == .ok)
        }
    }

    @Test("Webhooks: the secret is shown once and needs the password; test, replay, disable and delete")
    func webhooks() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite) { $0.allowInsecureWebhooks = true }
        try await environment.withApp { api in
            let (admin, _) = try await signedInBrowser(environment, api, role: .admin)
            try await admin.get("/console/webhooks")
            let noPassword = try await admin.post(
                "/console/webhook-create", [("url", "http://127.0.0.1:9/hook"), ("password", "")])
            #expect(noPassword.errorCode == "operator_reauthentication_required")
            let created = try await admin.post(
                "/console/webhook-create",
                [("url", "http://127.0.0.1:9/hook"), ("types", "session.ended"), ("password", "correct horse battery")])
            #expect(created.status == .seeOther)
            let landed = try await admin.get("/console/\(try #require(created.location))")
            let secret = try #require(ConsoleBrowser.Page.first(#"id="webhook-secret">([^<]+)<"#, in: landed.html))
            #expect(secret.hasPrefix("whsec_"))
            let list = try await environment.store.webhooks(
                projectID: environment.project.project.id, afterID: nil, limit: 10)
            let webhook = try #require(list.first)
            #expect(webhook.types == ["session.ended"])
            let page = try await admin.get("/console/webhook?id=\(webhook.id)")
            #expect(!page.html.contains(secret), "shown once")
            let test = try await admin.post("/console/webhook-test", [("webhook_id", webhook.id)])
            #expect(test.location == "webhook?id=\(webhook.id)&notice=test-sent")
            let deliveries = try await admin.get("/console/webhook?id=\(webhook.id)")
            #expect(deliveries.html.contains("webhook.test"))
            let replay = try await admin.post("/console/webhook-replay", [("webhook_id", webhook.id), ("after", "0")])
            #expect(replay.status == .seeOther)
            let badReplay = try await admin.post(
                "/console/webhook-replay", [("webhook_id", webhook.id), ("after", "x")])
            #expect(badReplay.status == .badRequest)
            try await admin.post("/console/webhook-update", [("webhook_id", webhook.id), ("enabled", "false")])
            #expect(
                try await environment.store.webhook(projectID: environment.project.project.id, id: webhook.id)?.enabled
                    == false)
            let deleted = try await admin.post(
                "/console/webhook-delete", [("webhook_id", webhook.id), ("password", "correct horse battery")])
            #expect(deleted.location == "webhooks?notice=webhook-deleted")
            #expect(
                try await environment.store.webhook(projectID: environment.project.project.id, id: webhook.id) == nil)
            let audit = try await environment.store.auditEvents(
                projectID: environment.project.project.id, before: nil, limit: 10)
            #expect(audit.contains { $0.type == "webhook.deleted" && $0.actor.kind == .operator })
        }
    }

    @Test("Operators: an owner invites one (the link is shown once) and removes one, with the password")
    func operators() async throws {
        try await withConsole(role: .owner) { environment, api, owner, account in
            try await owner.get("/console/operators")
            let invited = try await owner.post(
                "/console/operator-create", [("email", "Ada@Example.com"), ("role", "support")])
            #expect(invited.status == .seeOther)
            let landed = try await owner.get("/console/\(try #require(invited.location))")
            let link = try #require(
                ConsoleBrowser.Page.first(#"data-relative="(enroll\?token=[^"]+)""#, in: landed.html))
            let enroll = try await ConsoleBrowser(api).get("/console/\(link)")
            #expect(enroll.status == .ok)
            let duplicate = try await owner.post(
                "/console/operator-create", [("email", "ada@example.com"), ("role", "viewer")])
            #expect(duplicate.errorCode == "operator_exists")
            let ada = try #require(try await environment.store.operators().first { $0.email == "ada@example.com" })
            let me = try await owner.post(
                "/console/operator-remove", [("operator_id", account.id), ("password", "correct horse battery")])
            #expect(me.status == .badRequest, "an owner cannot remove themselves")
            let removed = try await owner.post(
                "/console/operator-remove", [("operator_id", ada.id), ("password", "correct horse battery")])
            #expect(removed.status == .seeOther)
            #expect(try await environment.store.operators().contains { $0.id == ada.id } == false)
        }
    }
}
