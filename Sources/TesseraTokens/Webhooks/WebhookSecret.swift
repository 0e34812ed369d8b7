import Crypto
import Foundation

/// The secret a webhook endpoint's deliveries are signed with: `whsec_` and the standard base64 of its
/// bytes, as Standard Webhooks v1 writes it.
///
/// Tessera shows an endpoint's secret once, when the endpoint is created or its secret rotated. Keep
/// it where your backend keeps other credentials; its ``description`` never prints it.
public struct WebhookSecret: Sendable, Hashable, CustomStringConvertible {
    /// The secret's bytes: the HMAC-SHA256 key.
    public let bytes: [UInt8]

    /// The prefix of a secret's text form.
    public static let prefix = "whsec_"

    /// The fewest and most bytes a secret may have (Standard Webhooks asks for 24 to 64).
    public static let byteRange = 24...64

    /// Reads a secret from its text form: `whsec_` followed by standard base64, padded or not.
    /// The prefix may be left out, as the Standard Webhooks libraries allow.
    ///
    /// - Throws: ``WebhookVerificationError/Code/invalidSecret`` when the text is not base64 of
    ///   24 to 64 bytes.
    public init(_ text: String) throws(WebhookVerificationError) {
        var encoded = Substring(text)
        if encoded.hasPrefix(Self.prefix) { encoded = encoded.dropFirst(Self.prefix.count) }
        let remainder = encoded.utf8.count % 4
        let padded = remainder == 0 ? String(encoded) : String(encoded) + String(repeating: "=", count: 4 - remainder)
        guard encoded.utf8.allSatisfy(Self.isBase64), let data = Data(base64Encoded: padded) else {
            throw WebhookVerificationError(.invalidSecret, "A webhook secret is whsec_ followed by base64.")
        }
        try self.init(bytes: Array(data))
    }

    /// A secret of these bytes.
    ///
    /// - Throws: ``WebhookVerificationError/Code/invalidSecret`` unless there are 24 to 64 bytes.
    public init(bytes: [UInt8]) throws(WebhookVerificationError) {
        guard Self.byteRange.contains(bytes.count) else {
            throw WebhookVerificationError(.invalidSecret, "A webhook secret holds 24 to 64 bytes.")
        }
        self.bytes = bytes
    }

    /// A new secret of 32 random bytes from the system's secure generator.
    public static func generate() -> WebhookSecret {
        let key = SymmetricKey(size: .bits256)
        let bytes = key.withUnsafeBytes { Array($0) }
        // 32 bytes is inside the range: this cannot throw.
        return try! WebhookSecret(bytes: bytes)
    }

    /// The text form, `whsec_` and padded standard base64: what an endpoint's owner is shown once.
    public var text: String { Self.prefix + Data(bytes).base64EncodedString() }

    /// Never the secret.
    public var description: String { "WebhookSecret(\(bytes.count) bytes)" }

    private static func isBase64(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2B || byte == 0x2F || byte == 0x3D
    }
}
