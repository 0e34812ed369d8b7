public import Crypto

/// JWK thumbprints (RFC 7638): the SHA-256 of a key's required members, names sorted, as compact
/// JSON; base64url. A session bound to a device key names the key by its thumbprint (`jkt`).
public enum JWKThumbprint {
    /// The thumbprint of a P-256 public key: SHA-256 of `{"crv":"P-256","kty":"EC","x":…,"y":…}`.
    public static func sha256(of key: P256.Signing.PublicKey) -> String {
        let point = Array(key.x963Representation)  // 0x04 ‖ x ‖ y
        return sha256(requiredMembers: [
            ("crv", "P-256"), ("kty", "EC"), ("x", Base64URL.encode(point[1..<33])),
            ("y", Base64URL.encode(point[33..<65])),
        ])
    }

    /// The thumbprint of a JWK given by its required members (RFC 7638 §3.2: for `EC` `crv`, `kty`, `x`,
    /// `y`; for `RSA` `e`, `kty`, `n`), in any order: they are sorted by name before hashing.
    public static func sha256(requiredMembers: [(name: String, value: String)]) -> String {
        var writer = JSONWriter()
        for member in requiredMembers.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            writer.member(member.name, member.value)
        }
        return Base64URL.encode(SHA256.hash(data: writer.finish()))
    }

    /// The thumbprint of a P-256 key given by `x` and `y` as canonical base64url (what a `jwk` holds
    /// once checked): its required members written straight into the hashed bytes, already sorted,
    /// with nothing to escape.
    static func sha256(p256X x: String, y: String) -> String {
        var (x, y) = (x, y)
        var hasher = SHA256()
        func update(_ text: StaticString) {
            text.withUTF8Buffer { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        }
        update(#"{"crv":"P-256","kty":"EC","x":""#)
        x.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        update(#"","y":""#)
        y.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        update(#""}"#)
        return hasher.finalize().withUnsafeBytes { Base64URL.string($0) }
    }
}
