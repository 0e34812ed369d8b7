import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// `POST|GET /v1/admin/webhooks`, `GET|PATCH|DELETE /v1/admin/webhooks/{id}` and
/// `POST …/rotate-secret` (secret key, on the selected backend).
@Suite("Admin API: webhooks")
struct WebhookEndpointTests {
    private static let members: Set<String> = [
        "id", "url", "types", "description", "enabled", "created_at", "updated_at", "disabled_at", "disabled_reason",
        "previous_secret_expires_at",
    ]

    @Test("Create shows the secret once; read, list, patch, rotate and delete never show one")
    func lifecycle() async throws {
        try await TestEnvironment.withApp { environment, client in
            let created = try await client.admin(
                .post, "/v1/admin/webhooks",
                body:
                    #"{"url":"https://example.com/hook","types":["profile.merged","profile.merged"],"description":"CRM"}"#
            )
            #expect(created.status == .created)
            let secret = try #require(created.json["secret"] as? String)
            #expect(throws: Never.self) { try WebhookSecret(secret) }
            #expect(secret.hasPrefix("whsec_"))
            let webhook = created["webhook"]
            let id = try #require(webhook["id"] as? String)
            #expect(id.hasPrefix("whk_"))
            #expect(Set(webhook.keys) == Self.members)
            #expect(webhook["types"] as? [String] == ["profile.merged"])
            #expect(webhook["enabled"] as? Bool == true && webhook["disabled_at"] is NSNull)
            #expect(webhook["description"] as? String == "CRM")

            let read = try await client.admin(.get, "/v1/admin/webhooks/\(id)")
            #expect(read.status == .ok && read["webhook"]["url"] as? String == "https://example.com/hook")
            #expect(!String(decoding: read.body, as: UTF8.self).contains("whsec_"))

            let patched = try await client.admin(
                .patch, "/v1/admin/webhooks/\(id)",
                body: #"{"enabled":false,"types":null,"description":null,"url":"https://example.org/h2"}"#)
            #expect(patched.status == .ok)
            #expect(patched["webhook"]["enabled"] as? Bool == false)
            #expect(patched["webhook"]["disabled_reason"] as? String == "admin")
            #expect(patched["webhook"]["types"] as? [String] == [])
            #expect(patched["webhook"]["description"] is NSNull)
            #expect(patched["webhook"]["url"] as? String == "https://example.org/h2")

            let rotated = try await client.admin(.post, "/v1/admin/webhooks/\(id)/rotate-secret")
            #expect(rotated.status == .ok)
            let newSecret = try #require(rotated.json["secret"] as? String)
            #expect(newSecret != secret && newSecret.hasPrefix("whsec_"))
            let after = try await client.admin(.get, "/v1/admin/webhooks/\(id)")
            #expect(
                after["webhook"]["previous_secret_expires_at"] as? String
                    == RFC3339.string(environment.clock.seconds + 86_400))
            #expect(!String(decoding: after.body, as: UTF8.self).contains("whsec_"))

            let list = try await client.admin(.get, "/v1/admin/webhooks")
            #expect(list.status == .ok && (list.json["webhooks"] as? [[String: Any]])?.count == 1)
            #expect(list.json["next_cursor"] is NSNull)
            #expect(!String(decoding: list.body, as: UTF8.self).contains("whsec_"))

            #expect(try await client.admin(.delete, "/v1/admin/webhooks/\(id)").status == .noContent)
            #expect(try await client.admin(.delete, "/v1/admin/webhooks/\(id)").errorCode == "not_found")
            #expect(try await client.admin(.get, "/v1/admin/webhooks/\(id)").status == .notFound)
        }
    }

    @Test("The list pages with limit and cursor, and holds only the key's project")
    func pagination() async throws {
        try await TestEnvironment.withApp { environment, client in
            var ids: [String] = []
            for index in 0..<5 {
                let created = try await client.admin(
                    .post, "/v1/admin/webhooks", body: #"{"url":"https://example.com/\#(index)"}"#)
                ids.append(try #require(created["webhook"]["id"] as? String))
            }
            let other = try await environment.makeOtherProject()
            let foreign = try await client.send(
                .post, "/v1/admin/webhooks", bearer: other.secretKey, body: #"{"url":"https://example.com/o"}"#)
            let foreignID = try #require(foreign["webhook"]["id"] as? String)

            var seen: [String] = []
            var cursor: String?
            repeat {
                let page = try await client.admin(
                    .get, "/v1/admin/webhooks?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
                #expect(page.status == .ok)
                let items = try #require(page.json["webhooks"] as? [[String: Any]])
                #expect(items.count <= 2)
                seen += items.compactMap { $0["id"] as? String }
                cursor = page.json["next_cursor"] as? String
            } while cursor != nil
            #expect(seen == ids.sorted())
            #expect(try await client.admin(.get, "/v1/admin/webhooks/\(foreignID)").status == .notFound)
            #expect(try await client.admin(.delete, "/v1/admin/webhooks/\(foreignID)").status == .notFound)
            #expect(
                try await client.admin(.patch, "/v1/admin/webhooks/\(foreignID)", body: #"{"enabled":false}"#).status
                    == .notFound)
            #expect(try await client.admin(.post, "/v1/admin/webhooks/\(foreignID)/rotate-secret").status == .notFound)
        }
    }

    @Test("Bad input is 400 and changes nothing; refused URLs are webhook_url_not_allowed")
    func badInput() async throws {
        try await TestEnvironment.withApp { _, client in
            for url in [
                "http://example.com/h", "https://127.0.0.1/h", "https://[::1]/h", "https://10.0.0.1/h",
                "https://localhost/h", "https://169.254.169.254/", "https://[fe80::1]/h", "not a url",
            ] {
                let reply = try await client.admin(.post, "/v1/admin/webhooks", body: #"{"url":"\#(url)"}"#)
                #expect(reply.status == .badRequest && reply.errorCode == "webhook_url_not_allowed", "\(url)")
            }
            for body in [
                #"{}"#, #"{"url":5}"#, #"{"url":"https://example.com","types":["nope"]}"#,
                #"{"url":"https://example.com","types":"profile.merged"}"#,
                #"{"url":"https://example.com","extra":1}"#,
                #"{"url":"https://example.com","description":"\#(String(repeating: "x", count: 501))"}"#,
            ] {
                let reply = try await client.admin(.post, "/v1/admin/webhooks", body: body)
                #expect(reply.status == .badRequest && reply.errorCode == "invalid_request", "\(body)")
            }
            for query in ["limit=0", "limit=201", "limit=x", "cursor=abc"] {
                let reply = try await client.admin(.get, "/v1/admin/webhooks?\(query)")
                #expect(reply.status == .badRequest && reply.errorCode == "invalid_request", "\(query)")
            }
            let listed = try await client.admin(.get, "/v1/admin/webhooks")
            #expect((listed.json["webhooks"] as? [[String: Any]])?.isEmpty == true, "nothing was created")

            let created = try await client.admin(.post, "/v1/admin/webhooks", body: #"{"url":"https://example.com"}"#)
            let id = try #require(created["webhook"]["id"] as? String)
            for body in [
                #"{"enabled":"yes"}"#, #"{"types":["nope"]}"#, #"{"secret":"x"}"#, #"{"url":null}"#,
                #"{"enabled":null}"#, #"{"description":"a\u0007b"}"#,
            ] {
                let reply = try await client.admin(.patch, "/v1/admin/webhooks/\(id)", body: body)
                #expect(reply.status == .badRequest && reply.errorCode == "invalid_request", "\(body)")
            }
            let refused = try await client.admin(
                .patch, "/v1/admin/webhooks/\(id)", body: #"{"url":"https://192.168.0.1/h"}"#)
            #expect(refused.errorCode == "webhook_url_not_allowed")
            #expect(
                try await client.admin(.get, "/v1/admin/webhooks/\(id)")["webhook"]["url"] as? String
                    == "https://example.com")
            #expect(try await client.admin(.get, "/v1/admin/webhooks/whk_unknown").status == .notFound)
            #expect(try await client.admin(.get, "/v1/admin/webhooks/nope%00").status == .notFound)
            #expect(
                try await client.send(.get, "/v1/admin/webhooks", bearer: client.publishableKey).errorCode
                    == "invalid_credentials")
        }
    }

    @Test("With --allow-insecure-webhooks, http and loopback URLs are accepted")
    func insecureAllowed() async throws {
        let environment = try await TestEnvironment.make { $0.allowInsecureWebhooks = true }
        try await environment.withApp { client in
            let reply = try await client.admin(
                .post, "/v1/admin/webhooks", body: #"{"url":"http://127.0.0.1:9999/hook"}"#)
            #expect(reply.status == .created)
        }
    }
}
