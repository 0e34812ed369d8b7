import Crypto

/// Opaque secrets: session tokens, installation secrets, API keys and identifiers.
///
/// Every secret carries at least 256 random bits from the system's cryptographically secure
/// generator. A server stores only ``sha256(_:)`` of a secret and compares digests with
/// ``constantTimeEquals(_:_:)``, so a database leak or a timing probe reveals no usable credential.
public enum OpaqueToken {
    /// `prefix` followed by `byteCount` random bytes in base64url.
    public static func generate(prefix: String, byteCount: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return generate(prefix: prefix, byteCount: byteCount, using: &generator)
    }

    /// `prefix` followed by `byteCount` bytes from `generator` in base64url.
    public static func generate(
        prefix: String,
        byteCount: Int = 32,
        using generator: inout some RandomNumberGenerator
    ) -> String {
        prefix + Base64URL.encode(randomBytes(count: byteCount, using: &generator))
    }

    /// A session token: `st_` and 256 random bits.
    public static func sessionToken() -> String { generate(prefix: "st_", byteCount: 32) }

    /// An installation secret: 256 random bits in base64url, kept by the SDK.
    public static func installationSecret() -> String { generate(prefix: "", byteCount: 32) }

    /// A publishable key: `pk_` and 192 random bits. It is public; the randomness only makes it unguessable.
    public static func publishableKey() -> String { generate(prefix: "pk_", byteCount: 24) }

    /// A secret key: `sk_` and 256 random bits.
    public static func secretKey() -> String { generate(prefix: "sk_", byteCount: 32) }

    /// An identifier such as `usr_…`: the prefix and 128 random bits.
    public static func identifier(prefix: String) -> String { generate(prefix: prefix, byteCount: 16) }

    /// The SHA-256 digest of the token's UTF-8 bytes, the only form in which a server stores it.
    public static func sha256(_ token: some StringProtocol) -> [UInt8] {
        var text = String(token)
        return text.withUTF8 { Array(SHA256.hash(data: UnsafeRawBufferPointer($0))) }
    }

    /// Compares two byte strings in time that depends only on their lengths.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    static func randomBytes(count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }
}
