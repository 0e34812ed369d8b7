import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The sender's half of the Standard Webhooks interop check: `Server/Tests/webhooks/interop.py`
/// starts a receiver, then runs this test with the receiver's URL and a secret in the environment,
/// and verifies what arrives with the `standardwebhooks` package from PyPI. Without that
/// environment the test is skipped.
@Suite("Webhook interop (driven by Server/Tests/webhooks/interop.py)")
struct WebhookInteropTests {
    static let environment = ProcessInfo.processInfo.environment

    @Test(
        "Delivers a fresh delivery (two signatures) and a stale one to the Python receiver",
        .enabled(if: environment["TESSERA_WEBHOOK_INTEROP_URL"] != nil))
    func deliverToPython() async throws {
        let url = try #require(Self.environment["TESSERA_WEBHOOK_INTEROP_URL"])
        let current = try WebhookSecret(try #require(Self.environment["TESSERA_WEBHOOK_INTEROP_SECRET"]))
        let previous = try WebhookSecret(try #require(Self.environment["TESSERA_WEBHOOK_INTEROP_PREVIOUS_SECRET"]))
        let sender = WebhookSender(allowInsecure: true)
        let now = Int64(Date().timeIntervalSince1970)
        let body = Array(
            #"{"id":"evt_interop1","sequence":1,"type":"profile.merged","created_at":"2026-11-25T12:00:00Z","actor":{"type":"sdk","id":null},"data":{"profile_id":"usr_a","from_profile_id":"usr_b","external_id":"ü-1","alias_ids":["usr_b"]}}"#
                .utf8)
        let fresh = await sender.send(
            .init(id: "evt_interop1", timestamp: now, body: body), to: url, secrets: [current, previous])
        #expect(fresh.kind == .delivered, "\(fresh)")
        let stale = await sender.send(
            .init(id: "evt_interop2", timestamp: now - 600, body: body), to: url, secrets: [current])
        #expect(stale.kind == .delivered, "\(stale)")
    }
}
