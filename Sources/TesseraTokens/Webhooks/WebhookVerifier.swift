import Crypto
public import Foundation

/// Verifies a webhook delivery from Tessera (or any Standard Webhooks v1 sender) in one call.
///
/// ```swift
/// let verifier = try WebhookVerifier(secret: "whsec_…")
/// let delivery = try verifier.verify(body: bodyBytes, headers: request.headers)
/// // delivery.id is the event's ID: the same on every retry, so record it and skip repeats.
/// ```
///
/// Give it the body exactly as received (before any JSON decoding: re-encoding changes the bytes).
/// It checks that `webhook-timestamp` is within ``tolerance`` of now, which refuses a replay of an
/// old delivery, then that one `v1` signature of `webhook-signature` matches under one of the
/// secrets (during a rotation, hold both), comparing in constant time.
public struct WebhookVerifier: Sendable {
    /// A verified delivery.
    public struct Delivery: Sendable, Hashable {
        /// `webhook-id`: the event's ID, the same on every attempt. Use it to drop repeats.
        public let id: String
        /// `webhook-timestamp`: when this attempt was signed.
        public let timestamp: Date
    }

    /// The secrets a delivery may be signed with.
    public let secrets: [WebhookSecret]
    /// How far `webhook-timestamp` may lie from now, either way (Standard Webhooks: five minutes).
    public let tolerance: TimeInterval

    /// The most signatures read from one `webhook-signature` header.
    static let maximumSignatures = 16

    /// A verifier for deliveries signed with the secret in its text form (`whsec_…`).
    ///
    /// - Throws: ``WebhookVerificationError/Code/invalidSecret``.
    public init(secret: String, tolerance: TimeInterval = 300) throws(WebhookVerificationError) {
        self.init(secrets: [try WebhookSecret(secret)], tolerance: tolerance)
    }

    /// A verifier that accepts deliveries signed with any of `secrets`.
    public init(secrets: [WebhookSecret], tolerance: TimeInterval = 300) {
        self.secrets = secrets
        self.tolerance = tolerance
    }

    /// Verifies a delivery from its body and its HTTP headers (names compared case-insensitively).
    public func verify<Body: Collection<UInt8>>(
        body: Body, headers: [String: String], now: Date = Date()
    ) throws(WebhookVerificationError) -> Delivery {
        var id: String?
        var timestamp: String?
        var signature: String?
        for (name, value) in headers {
            switch name.lowercased() {
            case "webhook-id": id = value
            case "webhook-timestamp": timestamp = value
            case "webhook-signature": signature = value
            default: continue
            }
        }
        return try verify(body: body, id: id, timestamp: timestamp, signature: signature, now: now)
    }

    /// Verifies a delivery from its body and the values of its three `webhook-` headers.
    public func verify<Body: Collection<UInt8>>(
        body: Body, id: String?, timestamp: String?, signature: String?, now: Date = Date()
    ) throws(WebhookVerificationError) -> Delivery {
        guard let id, !id.isEmpty, let timestamp, !timestamp.isEmpty, let signature, !signature.isEmpty else {
            throw WebhookVerificationError(
                .missingHeaders, "A delivery needs webhook-id, webhook-timestamp and webhook-signature.")
        }
        guard timestamp.utf8.count <= 15, timestamp.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Int64(timestamp)
        else {
            throw WebhookVerificationError(.invalidTimestamp, "webhook-timestamp is not a whole number of seconds.")
        }
        let signedAt = Date(timeIntervalSince1970: TimeInterval(seconds))
        if signedAt < now.addingTimeInterval(-tolerance) {
            throw WebhookVerificationError(.timestampTooOld, "The delivery was signed too long ago.")
        }
        if signedAt > now.addingTimeInterval(tolerance) {
            throw WebhookVerificationError(.timestampTooNew, "The delivery's timestamp lies in the future.")
        }
        let candidates = signature.split(separator: " ", omittingEmptySubsequences: true)
            .prefix(Self.maximumSignatures)
            .compactMap { entry -> Data? in
                guard entry.hasPrefix("v1,") else { return nil }
                return Data(base64Encoded: String(entry.dropFirst(3)))
            }
        for secret in secrets {
            // The same bytes the signer MACs; `==` against bytes is swift-crypto's constant-time compare.
            let expected = WebhookSigner.mac(id: id, timestamp: seconds, body: body, secret: secret)
            if candidates.contains(where: { expected == $0 }) {
                return Delivery(id: id, timestamp: signedAt)
            }
        }
        throw WebhookVerificationError(
            .noMatchingSignature, "No v1 signature in webhook-signature matches the body under the secret.")
    }
}
