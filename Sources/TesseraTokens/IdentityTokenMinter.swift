import Crypto

/// Mints identity tokens, for app backends written in Swift, the `tessera` CLI and tests.
///
/// This belongs on a server: the identity secret must never ship in an app binary. NumericDates are
/// written as whole seconds, the form every JWT library reads.
///
/// ```swift
/// let minter = IdentityTokenMinter(secret: secret)
/// let token = minter.mint(IdentityClaims(subject: "user-42", expiration: Date().addingTimeInterval(300),
///                                        audience: ["prj_123"], issuedAt: Date(), email: "ada@example.com"))
/// ```
public struct IdentityTokenMinter: Sendable {
    private let key: SymmetricKey
    private let encodedHeader: String

    /// Creates a minter.
    /// - Parameters:
    ///   - secret: the project's identity secret.
    ///   - includeKeyID: whether to name the secret's `kid` in the header (recommended).
    public init(secret: IdentitySecret, includeKeyID: Bool = true) {
        key = SymmetricKey(data: Array(secret.value.utf8))
        var header = JSONWriter()
        header.member("alg", "HS256")
        header.member("typ", "JWT")
        if includeKeyID { header.member("kid", secret.kid) }
        encodedHeader = Base64URL.encode(header.finish())
    }

    /// Signs `claims` and returns the compact token.
    public func mint(_ claims: IdentityClaims) -> String {
        var payload = JSONWriter()
        payload.member("sub", claims.subject)
        if claims.audience.count == 1 {
            payload.member("aud", claims.audience[0])
        } else if !claims.audience.isEmpty {
            payload.member("aud", claims.audience)
        }
        payload.member("exp", claims.expiration.timeIntervalSince1970.numericDate)
        if let iat = claims.issuedAt { payload.member("iat", iat.timeIntervalSince1970.numericDate) }
        if let nbf = claims.notBefore { payload.member("nbf", nbf.timeIntervalSince1970.numericDate) }
        if let jti = claims.tokenID { payload.member("jti", jti) }
        if let iss = claims.issuer { payload.member("iss", iss) }
        if let name = claims.name { payload.member("name", name) }
        if let avatarURL = claims.avatarURL { payload.member("avatar_url", avatarURL) }
        if let email = claims.email { payload.member("email", email) }
        let signingInput = encodedHeader + "." + Base64URL.encode(payload.finish())
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: key)
        return signingInput + "." + Base64URL.encode(Array(mac))
    }
}
