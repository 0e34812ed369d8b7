import Crypto

/// A P-256 private key that signs session JWTs, with its key identifier.
public struct SessionSigningKey: Sendable {
    /// The key identifier written into each token's header and published in the JWKS.
    public let kid: String
    let privateKey: P256.Signing.PrivateKey

    /// A new random key.
    /// - Parameter kid: its identifier; a random one when `nil`.
    public static func generate(kid: String? = nil) -> SessionSigningKey {
        let kid = kid ?? OpaqueToken.generate(prefix: "sjk_", byteCount: 12)
        return SessionSigningKey(kid: kid, privateKey: P256.Signing.PrivateKey())
    }

    /// Restores a stored key.
    /// - Parameters:
    ///   - kid: 1 to 64 characters of `[A-Za-z0-9_-]`.
    ///   - privateKeyRawRepresentation: the 32-byte private scalar.
    public init(kid: String, privateKeyRawRepresentation: [UInt8]) throws(KeyConfigurationError) {
        guard KeyID.isValid(kid) else { throw KeyConfigurationError("A kid is 1 to 64 characters of A-Z a-z 0-9 - _.") }
        do {
            privateKey = try P256.Signing.PrivateKey(rawRepresentation: privateKeyRawRepresentation)
        } catch {
            throw KeyConfigurationError("Not a P-256 private key.")
        }
        self.kid = kid
    }

    private init(kid: String, privateKey: P256.Signing.PrivateKey) {
        self.kid = kid
        self.privateKey = privateKey
    }

    /// The 32-byte private scalar, for storage. Treat it as a secret.
    public var privateKeyRawRepresentation: [UInt8] { Array(privateKey.rawRepresentation) }

    /// The public key as a JWK.
    public var publicJWK: JSONWebKey { JSONWebKey(publicKey: privateKey.publicKey, kid: kid) }
}
