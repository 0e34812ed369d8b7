import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// The outbound sender against a real receiver on 127.0.0.1 (insecure webhooks allowed), and the
/// outbound-safety rules without it.
@Suite("Webhook sender")
struct WebhookSenderTests {
    private let insecure = WebhookSender(allowInsecure: true)
    private let delivery = WebhookSender.Delivery(
        id: "evt_test1", timestamp: 1_790_000_000, body: Array(#"{"id":"evt_test1","type":"profile.merged"}"#.utf8))

    @Test("A 2xx is delivered, with the three headers; the signature verifies; a repeat keeps its webhook-id")
    func delivered() async throws {
        let receiver = try await WebhookReceiver.start(.status(204))
        let (current, previous) = (WebhookSecret.generate(), WebhookSecret.generate())
        let outcome = await insecure.send(delivery, to: receiver.url, secrets: [current, previous])
        #expect(outcome.kind == .delivered && outcome.statusCode == 204 && outcome.error == nil)
        #expect(outcome.durationMilliseconds >= 0)
        let received = try #require(await receiver.next())
        #expect(received.head.hasPrefix("POST /hook "))
        #expect(received.body == delivery.body)
        #expect(received.headers["webhook-id"] == "evt_test1")
        #expect(received.headers["webhook-timestamp"] == "1790000000")
        #expect(received.headers["content-type"] == "application/json")
        #expect(received.headers["host"] == "127.0.0.1:\(receiver.port)")
        let signature = try #require(received.headers["webhook-signature"])
        #expect(
            signature.split(separator: " ").count == 2
                && signature.split(separator: " ").allSatisfy { $0.hasPrefix("v1,") })
        let signedAt = Date(timeIntervalSince1970: 1_790_000_000)
        for secret in [current, previous] {
            let verified = try WebhookVerifier(secrets: [secret]).verify(
                body: received.body, headers: received.headers, now: signedAt)
            #expect(verified.id == "evt_test1")
        }
        #expect(throws: WebhookVerificationError.self) {
            try WebhookVerifier(secrets: [.generate()]).verify(
                body: received.body, headers: received.headers, now: signedAt)
        }

        let again = await insecure.send(delivery, to: receiver.url, secrets: [current])
        #expect(again.kind == .delivered)
        #expect(try #require(await receiver.next()).headers["webhook-id"] == "evt_test1")
        await receiver.stop()
    }

    @Test("Every delivery says who sends it (Tessera-Webhooks/1); of an answer, 4 KiB of its body is kept")
    func userAgentAndAnswerCap() async throws {
        let answer = (0..<10_240).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let receiver = try await WebhookReceiver.start(.answer(500, body: answer))
        let outcome = await insecure.send(delivery, to: receiver.url, secrets: [.generate()])
        #expect(try #require(await receiver.next()).headers["user-agent"] == "Tessera-Webhooks/1")
        #expect(outcome.kind == .failed && outcome.statusCode == 500)
        #expect(outcome.responseBody == Array(answer.prefix(4_096)))
        await receiver.stop()
        let short = try await WebhookReceiver.start(.answer(200, body: Array("thanks".utf8)))
        #expect(
            await insecure.send(delivery, to: short.url, secrets: [.generate()]).responseBody == Array("thanks".utf8))
        await short.stop()
    }

    @Test("410 is gone, 500 and a redirect are failures with their status code")
    func statuses() async throws {
        for (status, kind) in [(410, WebhookOutcome.Kind.gone), (500, .failed), (302, .failed), (200, .delivered)] {
            let receiver = try await WebhookReceiver.start(.status(status))
            let outcome = await insecure.send(delivery, to: receiver.url, secrets: [.generate()])
            #expect(outcome.kind == kind && outcome.statusCode == status && outcome.error == nil, "\(status)")
            await receiver.stop()
        }
    }

    @Test("A receiver that never answers is a timeout")
    func timeout() async throws {
        let receiver = try await WebhookReceiver.start(.silent)
        var sender = insecure
        sender.timeout = .milliseconds(300)
        let outcome = await sender.send(delivery, to: receiver.url, secrets: [.generate()])
        #expect(outcome.kind == .failed && outcome.error == .timeout && outcome.statusCode == nil)
        #expect(outcome.durationMilliseconds >= 300)
        #expect(await receiver.next() != nil, "the request did arrive")
        await receiver.stop()
    }

    @Test("A closed port is refused")
    func refused() async throws {
        let receiver = try await WebhookReceiver.start(.status(200))
        let url = receiver.url
        await receiver.stop()
        let outcome = await insecure.send(delivery, to: url, secrets: [.generate()])
        #expect(outcome.kind == .failed && outcome.error == .refused, "\(outcome)")
    }

    @Test(
        "Without insecure webhooks: loopback, private, link-local and unspecified addresses, localhost and http are refused",
        arguments: [
            "https://127.0.0.1/h", "https://127.1.2.3/h", "https://[::1]/h", "https://10.1.2.3/h",
            "https://172.16.0.1/h",
            "https://172.31.255.255/h", "https://192.168.1.1/h", "https://169.254.169.254/latest",
            "https://[fc00::1]/h",
            "https://[fd12:3456::1]/h", "https://[fe80::1]/h", "https://0.0.0.0/h", "https://[::]/h",
            "https://[::ffff:127.0.0.1]/h", "https://[::ffff:10.0.0.1]/h", "https://localhost/h",
            "https://LOCALHOST./h", "https://a.localhost/h", "http://example.com/h", "ftp://example.com/h",
            "https://user:pw@example.com/h", "not a url",
        ])
    func refusedURLs(url: String) async throws {
        let strict = WebhookSender(allowInsecure: false) { _ in
            Issue.record("no name is resolved for a URL refused as written")
            return []
        }
        #expect(throws: WebhookAddressRules.Refusal.self) {
            try WebhookAddressRules.checkURL(url, allowInsecure: false)
        }
        let outcome = await strict.send(delivery, to: url, secrets: [.generate()])
        #expect(outcome.kind == .failed && outcome.error == .urlNotAllowed)
    }

    @Test("A name with any private address among its answers is refused at delivery time")
    func resolvedPrivate() async throws {
        for answers in [
            ["10.0.0.7"], ["93.184.216.34", "192.168.0.1"], ["2606:2800:220:1::1", "fe80::1"], ["127.0.0.1"],
        ] {
            let strict = WebhookSender(allowInsecure: false) { host in
                #expect(host == "hooks.example.com")
                return answers.compactMap(IPAddressBytes.init)
            }
            let outcome = await strict.send(delivery, to: "https://hooks.example.com/h", secrets: [.generate()])
            #expect(outcome.kind == .failed && outcome.error == .urlNotAllowed, "\(answers)")
        }
        let unresolved = WebhookSender(allowInsecure: false) { host in throw WebhookResolver.ResolutionError(host: host)
        }
        #expect(await unresolved.send(delivery, to: "https://nowhere.example/h", secrets: [.generate()]).error == .dns)
    }

    @Test("Public addresses and https URLs pass the rules; insecure webhooks allow http and loopback")
    func allowedURLs() throws {
        for url in ["https://example.com/h", "https://93.184.216.34:8443/h", "https://[2606:2800:220:1::1]/h"] {
            #expect(throws: Never.self) { try WebhookAddressRules.checkURL(url, allowInsecure: false) }
        }
        #expect(try WebhookAddressRules.checkURL("https://93.184.216.34:8443/h", allowInsecure: false).port == 8443)
        // The client is given the name exactly as checked and resolved.
        #expect(
            try WebhookAddressRules.checkURL("https://Hooks.EXAMPLE.com./x?a=1", allowInsecure: false).url
                == "https://hooks.example.com/x?a=1")
        for url in [
            "https://%31%32%37.0.0.1/h", "https://[fe80::1%25eth0]/h", "https://bücher.example/h", "https://a..b/h",
        ] {
            #expect(throws: WebhookAddressRules.Refusal.self, "\(url)") {
                try WebhookAddressRules.checkURL(url, allowInsecure: false)
            }
        }
        #expect(throws: Never.self) { try WebhookAddressRules.checkURL("http://127.0.0.1:9/h", allowInsecure: true) }
        #expect(throws: Never.self) { try WebhookAddressRules.checkURL("https://localhost/h", allowInsecure: true) }
        #expect(throws: WebhookAddressRules.Refusal.self) {
            try WebhookAddressRules.checkURL("ftp://127.0.0.1/h", allowInsecure: true)
        }
        for address in ["8.8.8.8", "172.15.0.1", "172.32.0.1", "2001:4860:4860::8888"] {
            #expect(WebhookAddressRules.isAllowed(try #require(IPAddressBytes(address))), "\(address)")
        }
        #expect(IPAddressBytes("fe80::1")?.description == "fe80::1")
    }
}
