import Crypto

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
        let mac = mac(id: id, timestamp: timestamp, body: body, secret: secret)
        return "v1," + Base64.standard(mac)
    }

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

/// Standard base64 (RFC 4648 §4), padded, as Standard Webhooks writes signatures.
enum Base64 {
    static func standard<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i < input.count {
            let b0 = UInt32(input[i])
            let b1 = i + 1 < input.count ? UInt32(input[i + 1]) : 0
            let b2 = i + 2 < input.count ? UInt32(input[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            output.append(alphabet[Int(n >> 18 & 63)])
            output.append(alphabet[Int(n >> 12 & 63)])
            output.append(i + 1 < input.count ? alphabet[Int(n >> 6 & 63)] : 0x3D)
            output.append(i + 2 < input.count ? alphabet[Int(n & 63)] : 0x3D)
            i += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
