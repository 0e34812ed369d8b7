import Foundation
import HTTPTypes
import Logging
import TesseraTokens
import Testing

@testable import TesseraServer

/// `GET /v1/admin/webhooks/{id}/deliveries`, `POST …/replay` and `POST …/test` (secret key, on
/// the selected backend), with a dispatcher driven by hand and an injected transport.
@Suite("Admin API: webhook deliveries")
struct WebhookDeliveryEndpointTests {
    private static let members: Set<String> = [
        "event_id", "event_type", "sequence", "status", "attempt", "status_code", "error", "duration_ms", "at",
        "next_attempt_at", "queued_at",
    ]

    private func dispatcher(_ environment: TestEnvironment, _ receiver: WebhookDeliveryTests.Receiver)
        -> WebhookDispatcher
    {
        let clock = environment.clock
        return WebhookDispatcher(
            store: environment.store, transport: receiver.transport, policy: WebhookRetryPolicy(jitter: { _ in 0 }),
            now: { clock.now }, logger: Logger(label: "test"))
    }

    @Test("The log shows each attempt's outcome; replay and the test event queue deliveries again")
    func logReplayAndTest() async throws {
        try await TestEnvironment.withApp { environment, client in
            let receiver = WebhookDeliveryTests.Receiver()
            let dispatcher = dispatcher(environment, receiver)
            let created = try await client.admin(
                .post, "/v1/admin/webhooks", body: #"{"url":"https://example.com/hook","types":["session.created"]}"#)
            let id = try #require(created["webhook"]["id"] as? String)
            #expect(try await client.anonymous().sessionID != nil)
            #expect(try await client.anonymous().sessionID != nil)
            #expect(await dispatcher.runOnce() == 2)

            let log = try await client.admin(.get, "/v1/admin/webhooks/\(id)/deliveries")
            #expect(log.status == .ok)
            let rows = try #require(log.json["deliveries"] as? [[String: Any]])
            #expect(rows.count == 2 && log.json["next_cursor"] is NSNull)
            for row in rows {
                #expect(Set(row.keys) == Self.members)
                #expect(row["status"] as? String == "delivered" && row["attempt"] as? Int == 1)
                #expect(row["status_code"] as? Int == 200 && row["event_type"] as? String == "session.created")
                #expect(row["at"] as? String == RFC3339.string(environment.clock.seconds))
                #expect(row["next_attempt_at"] is NSNull && row["error"] is NSNull)
            }
            let first = try await client.admin(.get, "/v1/admin/webhooks/\(id)/deliveries?limit=1")
            let cursor = try #require(first.json["next_cursor"] as? String)
            let second = try await client.admin(.get, "/v1/admin/webhooks/\(id)/deliveries?limit=1&cursor=\(cursor)")
            let pageIDs = [first, second].compactMap { ($0.json["deliveries"] as? [[String: Any]])?.first?["event_id"] }
            #expect(Set(pageIDs.compactMap { $0 as? String }) == Set(rows.compactMap { $0["event_id"] as? String }))
            #expect(second.json["next_cursor"] is NSNull)

            // The receiver fails: the log shows the retry.
            receiver.answer(WebhookOutcome(kind: .failed, error: .timeout, durationMilliseconds: 15_000))
            let eventID = try #require(rows.first?["event_id"] as? String)
            let replay = try await client.admin(
                .post, "/v1/admin/webhooks/\(id)/replay", body: #"{"event_id":"\#(eventID)"}"#)
            #expect(replay.status == .accepted && replay.json["queued"] as? Int == 1)
            #expect(await dispatcher.runOnce() == 1)
            let pending = try await client.admin(.get, "/v1/admin/webhooks/\(id)/deliveries?status=pending")
            let retry = try #require((pending.json["deliveries"] as? [[String: Any]])?.first)
            #expect(retry["event_id"] as? String == eventID && retry["error"] as? String == "timeout")
            #expect(retry["status_code"] is NSNull && retry["duration_ms"] as? Int == 15_000)
            #expect(retry["next_attempt_at"] as? String == RFC3339.string(environment.clock.seconds + 5))

            receiver.answer(WebhookOutcome(kind: .delivered, statusCode: 200, durationMilliseconds: 1))
            let all = try await client.admin(.post, "/v1/admin/webhooks/\(id)/replay", body: #"{"after":0}"#)
            #expect(all.status == .accepted && all.json["queued"] as? Int == 2)
            #expect(await dispatcher.runOnce() == 2)

            receiver.clear()
            let test = try await client.admin(.post, "/v1/admin/webhooks/\(id)/test")
            #expect(test.status == .accepted)
            let testID = try #require(test.json["event_id"] as? String)
            #expect(await dispatcher.runOnce() == 1)
            let sent = try #require(receiver.sent.first)
            #expect(sent.delivery.id == testID)
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(sent.delivery.body)) as? [String: Any])
            #expect(body["type"] as? String == "webhook.test" && body["sequence"] as? Int == 0)
            #expect((body["data"] as? [String: Any])?["webhook_id"] as? String == id)
            #expect(
                !String(decoding: try await client.admin(.get, "/v1/admin/events?limit=200").body, as: UTF8.self)
                    .contains(testID), "a test event is not in the feed")
        }
    }

    @Test("Bad input is 400, an unknown webhook or event 404, another project's webhook 404")
    func refusals() async throws {
        try await TestEnvironment.withApp { environment, client in
            let created = try await client.admin(.post, "/v1/admin/webhooks", body: #"{"url":"https://example.com/h"}"#)
            let id = try #require(created["webhook"]["id"] as? String)
            for query in ["status=done", "limit=0", "limit=201", "cursor=x", "cursor=12.whk_x", "cursor=.evt_x"] {
                let reply = try await client.admin(.get, "/v1/admin/webhooks/\(id)/deliveries?\(query)")
                #expect(reply.errorCode == "invalid_request", "\(query)")
            }
            for body in [
                "{}", #"{"event_id":"evt_a","after":1}"#, #"{"after":-1}"#, #"{"after":"1"}"#, #"{"event_id":"x"}"#,
                #"{"event_id":null}"#, #"{"other":1}"#, "[]",
            ] {
                let reply = try await client.admin(.post, "/v1/admin/webhooks/\(id)/replay", body: body)
                #expect(reply.errorCode == "invalid_request", "\(body)")
            }
            let unknownEvent = try await client.admin(
                .post, "/v1/admin/webhooks/\(id)/replay", body: #"{"event_id":"evt_unknown"}"#)
            #expect(unknownEvent.status == .accepted && unknownEvent.json["queued"] as? Int == 0)
            for path in ["deliveries", "test"] {
                let method: HTTPRequest.Method = path == "test" ? .post : .get
                #expect(try await client.admin(method, "/v1/admin/webhooks/whk_unknown/\(path)").status == .notFound)
                #expect(try await client.admin(method, "/v1/admin/webhooks/nope/\(path)").status == .notFound)
            }
            #expect(
                try await client.admin(.post, "/v1/admin/webhooks/whk_unknown/replay", body: #"{"after":0}"#).status
                    == .notFound)
            let other = try await environment.makeOtherProject()
            let foreign = try await client.send(
                .get, "/v1/admin/webhooks/\(id)/deliveries", bearer: other.secretKey)
            #expect(foreign.status == .notFound)
            let publishable = try await client.send(
                .post, "/v1/admin/webhooks/\(id)/test", bearer: environment.project.publishableKey)
            #expect(publishable.status == .unauthorized)
        }
    }

    @Test("Metrics: deliveries by outcome, commit-to-delivery latency, each endpoint's oldest pending age")
    func metrics() async throws {
        try await TestEnvironment.withApp { environment, client in
            let receiver = WebhookDeliveryTests.Receiver()
            receiver.answer(WebhookOutcome(kind: .failed, statusCode: 503, durationMilliseconds: 1))
            let metrics = ServerMetrics()
            var dispatcher = dispatcher(environment, receiver)
            dispatcher.metrics = metrics
            let created = try await client.admin(
                .post, "/v1/admin/webhooks", body: #"{"url":"https://example.com/hook","types":["session.created"]}"#)
            let id = try #require(created["webhook"]["id"] as? String)
            #expect(try await client.anonymous().sessionID != nil)
            #expect(await dispatcher.runOnce() == 1)
            environment.clock.advance(seconds: 30)
            let age = "tessera_webhook_oldest_pending_age_seconds{webhook_id=\"\(id)\"}"
            let waiting = String(decoding: try await client.send(.get, "/metrics").body, as: UTF8.self)
            #expect(
                waiting.contains("\(age) 30"), "\(waiting.split(separator: "\n").filter { $0.contains("webhook") })")

            receiver.answer(WebhookOutcome(kind: .delivered, statusCode: 200, durationMilliseconds: 1))
            #expect(await dispatcher.runOnce() == 1)
            let exported = String(decoding: metrics.exposition(), as: UTF8.self)
            #expect(exported.contains(#"tessera_webhook_deliveries_total{outcome="retrying"} 1"#))
            #expect(exported.contains(#"tessera_webhook_deliveries_total{outcome="delivered"} 1"#))
            #expect(exported.contains("tessera_webhook_delivery_latency_seconds_count 1"))
            // Committed, then delivered 30 s later on the retry.
            #expect(exported.contains(#"tessera_webhook_delivery_latency_seconds_bucket{le="10.0"} 0"#))
            #expect(exported.contains(#"tessera_webhook_delivery_latency_seconds_bucket{le="30.0"} 1"#))
            #expect(exported.contains("tessera_webhook_delivery_latency_seconds_sum 30.0"))
            let caughtUp = String(decoding: try await client.send(.get, "/metrics").body, as: UTF8.self)
            #expect(caughtUp.contains("\(age) 0"), "an endpoint that caught up shows 0")
        }
    }
}
