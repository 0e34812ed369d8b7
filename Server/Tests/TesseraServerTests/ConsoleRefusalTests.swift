import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import TesseraTokens
import Testing

@testable import TesseraServer

/// Issue 25, deliver 1: a refused form comes back in place; every action ends in a redirect; a
/// one-time value is shown once; `GET` of a form's address is a page.
@Suite("Console: no dead ends, no double actions")
struct ConsoleRefusalTests {
    static let password = "correct horse battery"

    /// The attributes of the `input` whose `id` is given, as written.
    static func input(_ id: String, in html: String) -> String? {
        ConsoleBrowser.Page.first(#"(<input id=""# + id + #""[^>]*>)"#, in: html)
    }

    @Test("A wrong password at block: the profile page again, 403, reason kept, password not, message beside it")
    func blockRefused() async throws {
        try await withConsole(role: .admin) { environment, api, admin, adminAccount in
            let profileID = try #require(try await api.anonymous().profileID)
            try await admin.get("/console/profile?id=\(profileID)")
            let refused = try await admin.post(
                "/console/block",
                [("profile_id", profileID), ("reason", "chargeback <b>#4411</b>"), ("password", "guess guess guess")])
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "operator_password_wrong")
            #expect(refused.html.contains("<h1>"), "a whole page")
            #expect(refused.html.contains(profileID), "the profile's own page")
            let reason = try #require(Self.input("reason", in: refused.html))
            #expect(reason.contains(#"value="chargeback &lt;b&gt;#4411&lt;/b&gt;""#), "the input kept, escaped")
            let password = try #require(Self.input("password", in: refused.html))
            #expect(!password.contains("value="), "a password is never written back")
            #expect(password.contains(#"aria-invalid="true""#))
            #expect(password.contains("autofocus"))
            #expect(password.contains(#"aria-describedby="password-error""#))
            #expect(refused.html.contains(#"<p id="password-error" class="field-error""#))
            #expect(!refused.html.contains("guess guess guess"))
            #expect(
                try await environment.store.profile(projectID: environment.project.project.id, id: profileID)?.blocked
                    == false)
            // The right password works at once: the wrong one turned nothing into "needs your password".
            let blocked = try await admin.post(
                "/console/block", [("profile_id", profileID), ("reason", "chargeback"), ("password", Self.password)])
            #expect(blocked.status == .seeOther)
            #expect(
                try await environment.store.profile(projectID: environment.project.project.id, id: profileID)?.blocked
                    == true)
            // The profile says who blocked it and why.
            let page = try await admin.get("/console/profile?id=\(profileID)")
            #expect(page.html.contains(", by \(adminAccount.email): chargeback"))
            // Its timeline tells the same in words, newest first, after how it began.
            let timeline = try #require(page.html.range(of: #"<ol class="timeline">"#)).upperBound
            let items = page.html[timeline...].components(separatedBy: "</ol>")[0]
            let blockedLine = try #require(items.range(of: "Blocked by \(adminAccount.email): chargeback"))
            let started = try #require(items.range(of: "Started an anonymous session"))
            #expect(blockedLine.lowerBound < started.lowerBound)
        }
    }

    @Test("Erase with a mistyped ID: 400 on the profile page, the typed ID kept beside its message")
    func eraseRefused() async throws {
        try await withConsole(role: .admin) { environment, api, admin, _ in
            let profileID = try #require(try await api.anonymous().profileID)
            try await admin.get("/console/profile?id=\(profileID)")
            let refused = try await admin.post(
                "/console/erase", [("profile_id", profileID), ("confirm", "usr_typo"), ("password", Self.password)])
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == "confirmation_mismatch")
            let confirm = try #require(Self.input("confirm", in: refused.html))
            #expect(confirm.contains(#"value="usr_typo""#))
            #expect(confirm.contains("autofocus"))
            #expect(refused.html.contains(#"id="confirm-error""#))
        }
    }

    @Test("Settings: a bad value comes back beside its field, named by its label, what was typed kept")
    func settingsRefused() async throws {
        try await withConsole(role: .admin) { environment, api, admin, _ in
            let form = try await admin.get("/console/settings")
            #expect(form.html.contains("for development only"), "a line on what the risky setting does")
            let base = try #require(ConsoleBrowser.Page.first(#"name="base" value="([^"]+)""#, in: form.html))
            for (value, expected) in [("ten", "must be a whole number"), ("9999", "must be between 0 and 600")] {
                let refused = try await admin.post(
                    "/console/settings",
                    [("base", base), ("leeway_seconds", value), ("expected_issuer", "kept-issuer")])
                #expect(refused.status == .badRequest)
                let input = try #require(Self.input("leeway_seconds", in: refused.html))
                #expect(input.contains(#"value="\#(value)""#))
                #expect(input.contains(#"aria-invalid="true""#) && input.contains("autofocus"))
                #expect(refused.html.contains(#"<p id="leeway_seconds-error" class="field-error">"#))
                #expect(refused.html.contains("“Clock leeway (seconds, 0–600)”"), "the label, not the wire name")
                #expect(refused.html.contains(expected))
                #expect(try #require(Self.input("expected_issuer", in: refused.html)).contains(#"value="kept-issuer""#))
            }
        }
    }

    @Test("The Sessions page shows when an ended session ended, not its future expiry")
    func endedSessions() async throws {
        try await withConsole(role: .support) { environment, api, support, _ in
            let profileID = try #require(try await api.anonymous().profileID)
            try await support.get("/console/profile?id=\(profileID)")
            let ended = try await support.post("/console/revoke-sessions", [("profile_id", profileID)])
            #expect(ended.status == .seeOther)
            let page = try await support.get("/console/sessions")
            #expect(page.html.contains("<td>ended</td><td>ended <time"))
        }
    }

    @Test("Rotations redirect; the result is shown once; a reload rotates nothing")
    func postRedirectGet() async throws {
        try await withConsole(role: .admin) { environment, api, admin, _ in
            let projectID = environment.project.project.id
            try await admin.get("/console/keys")
            let before = try await environment.store.sessionKeys(projectID: projectID).count
            let rotated = try await admin.post("/console/rotate-signing-key", [("password", Self.password)])
            #expect(rotated.status == .seeOther)
            let location = try #require(rotated.location)
            #expect(location.hasPrefix("keys?flash="))
            let shown = try await admin.get("/console/\(location)")
            #expect(shown.status == .ok)
            #expect(shown.html.contains("The signing key was rotated"))
            let reloaded = try await admin.get("/console/\(location)")
            #expect(!reloaded.html.contains("The signing key was rotated"))
            #expect(reloaded.html.contains("shown once already"))
            #expect(try await environment.store.sessionKeys(projectID: projectID).count == before + 1)

            // The publishable key: shown once, and it is the project's key now.
            let publishable = try await admin.post(
                "/console/rotate-api-key",
                [("kind", "publishable"), ("grace_seconds", "0"), ("password", Self.password)])
            let page = try await admin.get("/console/\(try #require(publishable.location))")
            let key = try #require(ConsoleBrowser.Page.first(#"id="revealed-key">([^<]+)<"#, in: page.html))
            #expect(try await environment.store.project(publishableKeyHash: OpaqueToken.sha256(key))?.id == projectID)
            let again = try await admin.get("/console/\(try #require(publishable.location))")
            #expect(!again.html.contains(#"id="revealed-key""#))
            #expect(again.html.contains(key), "the publishable key is public: the Keys page lists it")
        }
    }

    @Test("A flash is the session's own: another operator's browser cannot read or spend it")
    func flashIsPerSession() async throws {
        try await withConsole(role: .admin) { environment, api, admin, _ in
            let (other, _) = try await signedInBrowser(environment, api, role: .admin)
            try await admin.get("/console/keys")
            let rotated = try await admin.post(
                "/console/rotate-api-key",
                [("kind", "publishable"), ("grace_seconds", "0"), ("password", Self.password)])
            let location = try #require(rotated.location)
            let stolen = try await other.get("/console/\(location)")
            #expect(!stolen.html.contains(#"id="revealed-key""#))
            let mine = try await admin.get("/console/\(location)")
            #expect(mine.html.contains(#"id="revealed-key""#))
        }
    }

    @Test("The secret key: owners rotate it with their password and see it once; admins may not")
    func secretKey() async throws {
        try await TestEnvironment.withApp(backend: .sqlite) { environment, api in
            let projectID = environment.project.project.id
            let (admin, _) = try await signedInBrowser(environment, api, role: .admin)
            let keysPage = try await admin.get("/console/keys")
            #expect(!keysPage.html.contains("Rotate the secret key"))
            let refused = try await admin.post(
                "/console/rotate-api-key",
                [("kind", "secret"), ("secret_grace_seconds", "0"), ("password", Self.password)])
            #expect(refused.status == .forbidden)
            #expect(refused.html.contains("<h1>Keys</h1>"), "the Keys page, in place")

            let (owner, _) = try await signedInBrowser(environment, api, role: .owner)
            try await owner.get("/console/keys")
            let rotated = try await owner.post(
                "/console/rotate-api-key",
                [("kind", "secret"), ("secret_grace_seconds", "0"), ("password", Self.password)])
            let page = try await owner.get("/console/\(try #require(rotated.location))")
            let key = try #require(ConsoleBrowser.Page.first(#"id="revealed-key">(sk_[^<]+)<"#, in: page.html))
            #expect(try await environment.store.project(secretKeyHash: OpaqueToken.sha256(key))?.id == projectID)
            #expect(
                try await environment.store.project(secretKeyHash: OpaqueToken.sha256(environment.project.secretKey))
                    == nil, "the old key stopped at once")
            let later = try await owner.get("/console/keys")
            #expect(!later.html.contains(key))
            #expect(later.html.contains("sk_…" + key.suffix(4)), "the last four characters")
            let audit = try await environment.store.auditEvents(projectID: projectID, before: nil, limit: 10)
            #expect(audit.contains { $0.type == "api_key.rotated" && $0.actor.kind == .operator })
        }
    }

    @Test("GET of a form's address goes to its page, never the API's JSON")
    func getOnPostRoutes() async throws {
        try await withConsole(role: .admin) { environment, api, admin, _ in
            for (path, home) in [
                ("block", "profiles"), ("erase", "profiles"), ("rotate-api-key", "keys"),
                ("webhook-create", "webhooks"),
                ("webhook-replay", "webhooks"), ("operator-create", "operators"), ("logout", "./"),
            ] {
                let page = try await admin.get("/console/\(path)")
                #expect(page.status == .seeOther, "\(path)")
                #expect(page.location == home, "\(path)")
                #expect(page.headers[.contentType] == nil)
            }
        }
    }

    @Test("Webhooks: a bad URL comes back with the form kept; the secret is shown once after the redirect")
    func webhooks() async throws {
        let environment = try await TestEnvironment.make(backend: .sqlite) { $0.allowInsecureWebhooks = true }
        try await environment.withApp { api in
            let (admin, _) = try await signedInBrowser(environment, api, role: .admin)
            try await admin.get("/console/webhooks")
            let refused = try await admin.post(
                "/console/webhook-create",
                [
                    ("url", "ftp://example.com/x"), ("types", "session.ended"), ("description", "billing"),
                    ("password", Self.password),
                ])
            #expect(refused.status == .badRequest)
            #expect(try #require(Self.input("url", in: refused.html)).contains(#"value="ftp://example.com/x""#))
            #expect(try #require(Self.input("description", in: refused.html)).contains(#"value="billing""#))
            #expect(refused.html.contains(#"id="url-error""#))
            let badType = try await admin.post(
                "/console/webhook-create",
                [("url", "http://127.0.0.1:9/hook"), ("types", "session.nope"), ("password", Self.password)])
            #expect(badType.status == .badRequest)
            #expect(badType.html.contains(#"id="types-error""#))
            let created = try await admin.post(
                "/console/webhook-create",
                [("url", "http://127.0.0.1:9/hook"), ("types", "session.ended"), ("password", Self.password)])
            #expect(created.status == .seeOther)
            let location = try #require(created.location)
            #expect(location.hasPrefix("webhook?id=whk_"))
            let page = try await admin.get("/console/\(location)")
            #expect(ConsoleBrowser.Page.first(#"id="webhook-secret">(whsec_[^<]+)<"#, in: page.html) != nil)
            let reload = try await admin.get("/console/\(location)")
            #expect(!reload.html.contains("whsec_"))
            let list = try await environment.store.webhooks(
                projectID: environment.project.project.id, afterID: nil, limit: 10)
            #expect(list.count == 1, "one endpoint, however often the page is reloaded")
            let webhookID = try #require(list.first?.id)
            try await admin.get("/console/webhook?id=\(webhookID)")
            let badReplay = try await admin.post(
                "/console/webhook-replay", [("webhook_id", webhookID), ("after", "x")])
            #expect(badReplay.status == .badRequest)
            #expect(try #require(Self.input("after", in: badReplay.html)).contains(#"value="x""#))
            let replay = try await admin.post("/console/webhook-replay", [("webhook_id", webhookID), ("after", "0")])
            let replayed = try await admin.get("/console/\(try #require(replay.location))")
            #expect(replayed.html.contains("queued again"))
        }
    }

    @Test("Operators: the enrollment link is shown once after the redirect; a taken email comes back in place")
    func operators() async throws {
        try await withConsole(role: .owner) { environment, api, owner, _ in
            try await owner.get("/console/operators")
            let invited = try await owner.post(
                "/console/operator-create", [("email", "Ada@Example.com"), ("role", "support")])
            #expect(invited.status == .seeOther)
            let page = try await owner.get("/console/\(try #require(invited.location))")
            let link = try #require(ConsoleBrowser.Page.first(#"data-relative="(enroll\?token=[^"]+)""#, in: page.html))
            #expect(
                try await ConsoleBrowser(api).get("/console/\(link.replacingOccurrences(of: "&amp;", with: "&"))")
                    .status == .ok)
            let reload = try await owner.get("/console/\(try #require(invited.location))")
            #expect(!reload.html.contains("enroll?token="))
            let duplicate = try await owner.post(
                "/console/operator-create", [("email", "ada@example.com"), ("role", "admin")])
            #expect(duplicate.status == .conflict)
            #expect(duplicate.errorCode == "operator_exists")
            #expect(try #require(Self.input("email", in: duplicate.html)).contains(#"value="ada@example.com""#))
            #expect(duplicate.html.contains(#"<option value="admin" selected"#), "the role kept")
            let audit = try await environment.store.operatorAudit(before: nil, limit: 10)
            #expect(
                audit.contains { $0.kind == .invited && $0.operatorEmail == "ada@example.com" && $0.actorEmail != nil })
        }
    }
}
