/// One of a project's identity secrets, the HMAC key that its backend signs identity tokens with.
///
/// The HMAC key is the UTF-8 bytes of the whole ``value`` string, exactly as a backend passes it
/// to a JWT library, so no library has to agree on a decoding step. It must be at least 32 bytes:
/// RFC 7518 §3.2 requires a key at least as long as the hash output.
public struct IdentitySecret: Sendable, Hashable {
    /// The key identifier a token may name in its `kid` header.
    public let kid: String
    /// The secret string.
    public let value: String

    /// The shortest accepted secret, in bytes.
    public static let minimumByteCount = 32

    /// Creates a secret from stored values.
    /// - Parameters:
    ///   - kid: 1 to 64 characters of `[A-Za-z0-9_-]`.
    ///   - value: the secret; at least 32 UTF-8 bytes.
    public init(kid: String, value: String) throws(KeyConfigurationError) {
        guard KeyID.isValid(kid) else {
            throw KeyConfigurationError("A kid is 1 to 64 characters of A-Z a-z 0-9 - _.")
        }
        guard value.utf8.count >= Self.minimumByteCount else {
            throw KeyConfigurationError("An identity secret must be at least \(Self.minimumByteCount) bytes.")
        }
        self.kid = kid
        self.value = value
    }

    /// A new secret: `tis_` followed by 256 random bits in base64url.
    public static func generate(kid: String? = nil) -> IdentitySecret {
        let kid = kid ?? OpaqueToken.generate(prefix: "ik_", byteCount: 9)
        // Both parts are valid by construction.
        return try! IdentitySecret(kid: kid, value: OpaqueToken.generate(prefix: "tis_", byteCount: 32))
    }
}
