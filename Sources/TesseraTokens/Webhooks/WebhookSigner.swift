import Crypto
import Foundation

/// Signs webhook deliveries as Standard Webhooks v1 does, so its libraries verify them unchanged.
///
/// The signed content is `webhook-id` `.` `webhook-timestamp` `.` body; each signature is `v1,` and the
/// standard base64 of its HMAC-SHA256 under one secret. During a secret rotation a delivery carries
/// one signature per secret, separated by a space, and a receiver holding either secret accepts it.
public struct WebhookSigner: Sendable {
    /// The secrets that sign, the newest first.
    public let secrets: [WebhookSecret]

    /// A signer under these secrets (one, or two during a rotation).
    public init(secrets: [WebhookSecret]) {
        self.secrets = secrets
    }

    /// The `webhook-signature` header value for a delivery.
    ///
    /// - Parameters:
    ///   - id: the `webhook-id` header: the event's ID, the same on every attempt.
    ///   - timestamp: the `webhook-timestamp` header, in Unix seconds, of this attempt.
    ///   - body: the exact bytes sent as the body.
    public func signature<Body: Collection<UInt8>>(id: String, timestamp: Int64, body: Body) -> String {
        secrets.map { Self.signature(id: id, timestamp: timestamp, body: body, secret: $0) }
            .joined(separator: " ")
    }

    /// One `v1,…` signature under one secret.
    static func signature<Body: Collection<UInt8>>(id: String, timestamp: Int64, body: Body, secret: WebhookSecret)
        -> String
    {
        "v1," + Data(mac(id: id, timestamp: timestamp, body: body, secret: secret)).base64EncodedString()
    }

    /// The HMAC-SHA256 of `id.timestamp.body` under the secret: what a `v1` signature encodes.
    static func mac<Body: Collection<UInt8>>(id: String, timestamp: Int64, body: Body, secret: WebhookSecret)
        -> HMAC<SHA256>.MAC
    {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret.bytes))
        hmac.update(data: Array(id.utf8))
        hmac.update(data: [0x2E])
        hmac.update(data: Array(String(timestamp).utf8))
        hmac.update(data: [0x2E])
        hmac.update(data: Array(body))
        return hmac.finalize()
    }
}
