import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Events feed: GET /v1/admin/events")
struct EventFeedTests {
    /// The events of one answer, with `next_after`.
    private func page(_ reply: Reply) -> (events: [[String: Any]], next: Int?) {
        ((reply.json["events"] as? [[String: Any]]) ?? [], reply.json["next_after"] as? Int)
    }

    @Test("Pages with after/next_after in sequence order, filters by types and profile, bounds limit")
    func paging() async throws {
        try await TestEnvironment.withApp { environment, client in
            let anonymous = try await client.anonymous()
            let anonymousProfile = try #require(anonymous.profileID)
            let user = try await client.identify(
                token: environment.identityToken(sub: "feed-user", name: "Feed"),
                bearer: anonymous.sessionToken)
            #expect(user.status == .ok)
            #expect(try await client.send(.post, "/v1/sessions/revoke", bearer: user.sessionToken).status == .noContent)
            #expect(try await client.admin(.patch, "/v1/admin/project", body: #"{"leeway_seconds":30}"#).status == .ok)

            // Everything, page by page, two at a time: each page follows the last without gap or repeat.
            var sequences: [Int] = []
            var types: [String] = []
            var after = 0
            while true {
                let reply = try await client.admin(.get, "/v1/admin/events?after=\(after)&limit=2")
                #expect(reply.status == .ok)
                let (events, next) = page(reply)
                #expect(events.count <= 2)
                sequences += events.compactMap { $0["sequence"] as? Int }
                types += events.compactMap { $0["type"] as? String }
                #expect(next == (events.last?["sequence"] as? Int ?? after))
                if events.isEmpty { break }
                after = try #require(next)
            }
            #expect(sequences == Array(1...sequences.count))
            #expect(
                types == [
                    "profile.created", "session.created", "profile.promoted", "session.ended", "profile.updated",
                    "session.created", "session.ended", "project.updated",
                ])

            let all = page(try await client.admin(.get, "/v1/admin/events")).events
            let first = try #require(all.first)
            #expect(Set(first.keys) == ["id", "sequence", "type", "created_at", "actor", "data"])
            #expect((first["id"] as? String)?.hasPrefix("evt_") == true)
            #expect(first["created_at"] as? String == RFC3339.string(environment.clock.seconds))
            let actor = try #require(first["actor"] as? [String: Any])
            #expect(actor["type"] as? String == "sdk")
            #expect(actor["id"] is NSNull, "an anonymous start has no calling session")
            #expect(first["data"] as? [String: String] == ["profile_id": anonymousProfile, "kind": "anonymous"])
            let revoke = try #require(
                all.first { ($0["data"] as? [String: Any])?["reason"] as? String == "signed_out" })
            #expect((revoke["actor"] as? [String: Any])?["id"] as? String == user.sessionID)
            let patch = try #require(all.last)
            #expect((patch["actor"] as? [String: Any])?["type"] as? String == "secret_key")
            #expect(
                !String(decoding: try await client.admin(.get, "/v1/admin/events").body, as: UTF8.self).contains(
                    "client_address"))

            let ended = page(try await client.admin(.get, "/v1/admin/events?types=session.ended,profile.promoted"))
            #expect(
                ended.events.map { $0["type"] as? String } == ["profile.promoted", "session.ended", "session.ended"])
            #expect(ended.next == 7)
            let other = try await client.identify(sub: "someone-else")
            let mine = page(
                try await client.admin(.get, "/v1/admin/events?profile_id=\(try #require(other.profileID))"))
            #expect(mine.events.map { $0["type"] as? String } == ["profile.created", "session.created"])
            let empty = page(try await client.admin(.get, "/v1/admin/events?after=1000"))
            #expect(empty.events.isEmpty)
            #expect(empty.next == 1000)
            #expect(page(try await client.admin(.get, "/v1/admin/events?limit=200")).events.count == 10)
            #expect(page(try await client.admin(.get, "/v1/admin/events?limit=1")).events.count == 1)
        }
    }

    @Test(
        "Bad parameters are 400 invalid_request",
        arguments: [
            "after=-1", "after=x", "after=1.5", "after=99999999999999999999", "after=", "limit=0", "limit=201",
            "limit=abc", "limit=", "types=", "types=session.ended,", "types=nope", "types=SESSION.ENDED",
            "profile_id=ses_x", "profile_id=", "profile_id=usr_%00",
        ])
    func badParameters(query: String) async throws {
        try await TestEnvironment.withApp { _, client in
            let reply = try await client.admin(.get, "/v1/admin/events?\(query)")
            #expect(reply.status == .badRequest, "\(query)")
            #expect(reply.errorCode == "invalid_request")
        }
    }

    @Test("Only the secret key reads the feed; another project's events are not in it")
    func credentials() async throws {
        let environment = try await TestEnvironment.make()
        let other = try await environment.makeOtherProject()
        try await environment.withApp { client in
            let anonymous = try await client.anonymous()
            let publishable = try await client.send(.get, "/v1/admin/events", bearer: client.publishableKey)
            #expect(publishable.status == .unauthorized)
            #expect(publishable.errorCode == "invalid_credentials")
            let session = try await client.send(.get, "/v1/admin/events", bearer: anonymous.sessionToken)
            #expect(session.status == .unauthorized)
            #expect(try await client.send(.get, "/v1/admin/events").status == .unauthorized)
            let foreign = try await client.send(.get, "/v1/admin/events", bearer: other.secretKey)
            #expect(foreign.status == .ok)
            #expect((foreign.json["events"] as? [Any])?.isEmpty == true)
            #expect(page(try await client.admin(.get, "/v1/admin/events")).events.count == 2)
        }
    }

    @Test(
        "The audit log: secret-key changes newest first with their client address, paged by cursor; SDK changes are not in it"
    )
    func audit() async throws {
        try await TestEnvironment.withApp { environment, client in
            _ = try await client.anonymous()
            #expect(try await client.admin(.patch, "/v1/admin/project", body: #"{"leeway_seconds":30}"#).status == .ok)
            #expect(try await client.admin(.post, "/v1/admin/identity-secrets").status == .created)
            #expect(try await client.admin(.post, "/v1/admin/signing-keys/rotate").status == .created)

            let first = try await client.admin(.get, "/v1/admin/audit?limit=2")
            #expect(first.status == .ok)
            let entries = try #require(first.json["events"] as? [[String: Any]])
            #expect(entries.map { $0["type"] as? String } == ["signing_key.rotated", "identity_secret.created"])
            let newest = try #require(entries.first)
            #expect(
                Set(newest.keys) == [
                    "id", "sequence", "type", "created_at", "actor", "data", "client_address", "reason",
                ])
            #expect((newest["actor"] as? [String: Any])?["type"] as? String == "secret_key")
            #expect(newest["client_address"] is String, "the address the change came from")
            #expect(newest["reason"] is NSNull)
            let cursor = try #require(first.json["next_cursor"] as? String)

            let second = try await client.admin(.get, "/v1/admin/audit?limit=2&cursor=\(cursor)")
            #expect(second.status == .ok)
            #expect((second.json["events"] as? [[String: Any]])?.map { $0["type"] as? String } == ["project.updated"])
            #expect(second.json["next_cursor"] is NSNull, "the last page")
            let sequences = (entries + ((second.json["events"] as? [[String: Any]]) ?? [])).compactMap {
                $0["sequence"] as? Int
            }
            #expect(sequences == sequences.sorted(by: >), "newest first")

            let beyond = try await client.admin(.get, "/v1/admin/audit?cursor=9999999999999999999")
            #expect(beyond.status == .ok, "a cursor past every sequence lists from the newest")
            #expect((beyond.json["events"] as? [[String: Any]])?.count == 3)
            for bad in ["cursor=abc", "cursor=", "cursor=-1", "limit=0", "limit=201", "limit=x"] {
                let reply = try await client.admin(.get, "/v1/admin/audit?\(bad)")
                #expect(reply.status == .badRequest, "\(bad)")
                #expect(reply.errorCode == "invalid_request")
            }
            #expect(
                try await client.send(.get, "/v1/admin/audit", bearer: client.publishableKey).status == .unauthorized)
        }
    }
}
