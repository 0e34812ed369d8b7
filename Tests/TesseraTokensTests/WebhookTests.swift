import Foundation
import Testing

@testable import TesseraTokens

/// Standard Webhooks v1 signing and verification, held against the official library's output
/// (`Tests/Vectors/standardwebhooks/vectors.json`).
@Suite("Webhook signatures (Standard Webhooks v1)")
struct WebhookTests {
    struct Vector: Decodable, CustomTestStringConvertible {
        var name: String
        var secret: String
        var id: String
        var timestamp: Int64
        var body: String
        var signature: String
        var testDescription: String { name }
    }

    static let vectors: [Vector] = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() }  // WebhookTests.swift, TesseraTokensTests
        let data = try! Data(contentsOf: url.appendingPathComponent("Vectors/standardwebhooks/vectors.json"))
        struct File: Decodable { var vectors: [Vector] }
        return try! JSONDecoder().decode(File.self, from: data).vectors
    }()

    static func headers(_ vector: Vector, signature: String? = nil) -> [String: String] {
        [
            "webhook-id": vector.id, "webhook-timestamp": String(vector.timestamp),
            "webhook-signature": signature ?? vector.signature,
        ]
    }

    static func at(_ vector: Vector, offset: TimeInterval = 0) -> Date {
        Date(timeIntervalSince1970: TimeInterval(vector.timestamp) + offset)
    }

    @Test("The signer writes what the official library writes", arguments: vectors)
    func signsLikeTheLibrary(_ vector: Vector) throws {
        let signer = WebhookSigner(secrets: [try WebhookSecret(vector.secret)])
        #expect(
            signer.signature(id: vector.id, timestamp: vector.timestamp, body: Array(vector.body.utf8))
                == vector.signature)
    }

    @Test("The verifier accepts the library's deliveries and names their ID", arguments: vectors)
    func verifiesTheLibrary(_ vector: Vector) throws {
        let verifier = try WebhookVerifier(secret: vector.secret)
        let delivery = try verifier.verify(
            body: Array(vector.body.utf8), headers: Self.headers(vector), now: Self.at(vector))
        #expect(delivery.id == vector.id)
        #expect(delivery.timestamp == Self.at(vector))
    }

    @Test("A changed body, ID or timestamp, or another secret, is refused", arguments: vectors)
    func tamperingRefused(_ vector: Vector) throws {
        let verifier = try WebhookVerifier(secret: vector.secret)
        let body = Array(vector.body.utf8)
        let now = Self.at(vector)
        func code(_ body: [UInt8], _ headers: [String: String], _ verifier: WebhookVerifier = verifier)
            -> WebhookVerificationError.Code?
        {
            do {
                _ = try verifier.verify(body: body, headers: headers, now: now)
                return nil
            } catch { return error.code }
        }
        #expect(code(body + [0x20], Self.headers(vector)) == .noMatchingSignature)
        if !body.isEmpty {
            var flipped = body
            flipped[flipped.count / 2] ^= 0x01
            #expect(code(flipped, Self.headers(vector)) == .noMatchingSignature)
        }
        var headers = Self.headers(vector)
        headers["webhook-id"] = vector.id + "x"
        #expect(code(body, headers) == .noMatchingSignature)
        headers = Self.headers(vector)
        headers["webhook-timestamp"] = String(vector.timestamp + 1)
        #expect(code(body, headers) == .noMatchingSignature)
        let other = WebhookVerifier(secrets: [WebhookSecret.generate()])
        #expect(code(body, Self.headers(vector), other) == .noMatchingSignature)
    }

    @Test("A timestamp outside five minutes either way is refused before the signature is checked")
    func staleAndFutureTimestamps() throws {
        let vector = Self.vectors[0]
        let verifier = try WebhookVerifier(secret: vector.secret)
        let body = Array(vector.body.utf8)
        _ = try verifier.verify(body: body, headers: Self.headers(vector), now: Self.at(vector, offset: 300))
        _ = try verifier.verify(body: body, headers: Self.headers(vector), now: Self.at(vector, offset: -300))
        #expect(throws: WebhookVerificationError(.timestampTooOld, "The delivery was signed too long ago.")) {
            try verifier.verify(body: body, headers: Self.headers(vector), now: Self.at(vector, offset: 301))
        }
        #expect(throws: WebhookVerificationError(.timestampTooNew, "The delivery's timestamp lies in the future.")) {
            try verifier.verify(body: body, headers: Self.headers(vector), now: Self.at(vector, offset: -301))
        }
    }

    @Test("During a rotation a delivery carries two signatures, and either secret verifies it")
    func rotationSignsTwice() throws {
        let old = WebhookSecret.generate()
        let new = WebhookSecret.generate()
        let body = Array(#"{"type":"session.ended"}"#.utf8)
        let header = WebhookSigner(secrets: [new, old]).signature(id: "evt_r", timestamp: 1_800_000_000, body: body)
        #expect(header.split(separator: " ").count == 2)
        #expect(header.split(separator: " ").allSatisfy { $0.hasPrefix("v1,") })
        let headers = ["Webhook-Id": "evt_r", "Webhook-Timestamp": "1800000000", "Webhook-Signature": header]
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for secret in [old, new] {
            let delivery = try WebhookVerifier(secrets: [secret]).verify(body: body, headers: headers, now: now)
            #expect(delivery.id == "evt_r")
        }
        #expect(throws: WebhookVerificationError.self) {
            try WebhookVerifier(secrets: [.generate()]).verify(body: body, headers: headers, now: now)
        }
    }

    @Test("Other signature versions and malformed entries are skipped, not fatal")
    func otherVersionsSkipped() throws {
        let vector = Self.vectors[0]
        let verifier = try WebhookVerifier(secret: vector.secret)
        let noise = "v1a,AAAA v2,\(vector.signature.dropFirst(3)) v1,%%% v1 "
        _ = try verifier.verify(
            body: Array(vector.body.utf8), headers: Self.headers(vector, signature: noise + vector.signature),
            now: Self.at(vector))
        #expect(throws: WebhookVerificationError.self) {
            try verifier.verify(
                body: Array(vector.body.utf8),
                headers: Self.headers(vector, signature: "v2," + vector.signature.dropFirst(3)), now: Self.at(vector))
        }
    }

    @Test("Missing headers and timestamps that are not whole seconds are typed errors")
    func malformedHeaders() throws {
        let vector = Self.vectors[0]
        let verifier = try WebhookVerifier(secret: vector.secret)
        let body = Array(vector.body.utf8)
        for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
            var headers = Self.headers(vector)
            headers[name] = nil
            #expect(throws: WebhookVerificationError.self) { try verifier.verify(body: body, headers: headers) }
            headers[name] = ""
            do {
                _ = try verifier.verify(body: body, headers: headers, now: Self.at(vector))
                Issue.record("accepted without \(name)")
            } catch { #expect(error.code == .missingHeaders) }
        }
        for timestamp in ["1614265330.0", "-1614265330", "1e9", " 1614265330", "99999999999999999999"] {
            var headers = Self.headers(vector)
            headers["webhook-timestamp"] = timestamp
            do {
                _ = try verifier.verify(body: body, headers: headers, now: Self.at(vector))
                Issue.record("accepted the timestamp \(timestamp)")
            } catch { #expect(error.code == .invalidTimestamp) }
        }
    }

    @Test("Secrets: with or without the prefix, padded or not; 24 to 64 bytes; never printed")
    func secrets() throws {
        let secret = WebhookSecret.generate()
        #expect(secret.bytes.count == 32)
        #expect(secret.text.hasPrefix("whsec_"))
        #expect(try WebhookSecret(secret.text) == secret)
        #expect(try WebhookSecret(String(secret.text.dropFirst(6))) == secret)
        #expect(try WebhookSecret(secret.text.replacingOccurrences(of: "=", with: "")) == secret)
        #expect(!String(describing: secret).contains(String(secret.text.dropFirst(6).prefix(8))))
        for bad in [
            "", "whsec_", "whsec_!!!!", "whsec_" + Data(count: 23).base64EncodedString(),
            "whsec_" + Data(count: 65).base64EncodedString(), "whsec_ AAAA",
        ] {
            do {
                _ = try WebhookSecret(bad)
                Issue.record("accepted the secret \(bad)")
            } catch { #expect(error.code == .invalidSecret) }
        }
    }
}
