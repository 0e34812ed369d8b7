internal import Crypto
public import Foundation

/// A verified DPoP proof (RFC 9449): who signed it and for which request.
public struct DPoPProof: Sendable, Hashable {
    /// The RFC 7638 thumbprint of the key in the proof's `jwk` header (`jkt`): what a session is bound to.
    public var thumbprint: String
    /// `jti`: unique per proof; a server refuses a second use on calls that change something.
    public var tokenID: String
    /// `htm`: the HTTP method.
    public var method: String
    /// `htu`: the request URL without query and fragment.
    public var url: String
    /// `iat`.
    public var issuedAt: Date
    /// `ath`: base64url SHA-256 of the credential the request presents, when it presents one.
    public var accessTokenHash: String?
    /// `nonce`: the server's `DPoP-Nonce`, when it asked for one.
    public var nonce: String?
    /// `tessera_body`: base64url SHA-256 of the request's body, when the client names it (Tessera's
    /// own claim; RFC 9449 §4.2 allows more claims). A proof does not otherwise cover the body, so
    /// a call whose body decides what it does (a session extension) needs it.
    public var bodyHash: String?

    /// Creates a proof's description.
    public init(
        thumbprint: String, tokenID: String, method: String, url: String, issuedAt: Date,
        accessTokenHash: String? = nil, nonce: String? = nil, bodyHash: String? = nil
    ) {
        self.thumbprint = thumbprint
        self.tokenID = tokenID
        self.method = method
        self.url = url
        self.issuedAt = issuedAt
        self.accessTokenHash = accessTokenHash
        self.nonce = nonce
        self.bodyHash = bodyHash
    }

    /// The `tessera_body` of a request body: base64url SHA-256 of its bytes.
    public static func bodyHash(of body: some Sequence<UInt8>) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(body))))
    }

    /// The `ath` of a credential: base64url SHA-256 of its ASCII bytes (RFC 9449 §4.2).
    public static func accessTokenHash(of credential: some StringProtocol) -> String {
        Base64URL.encode(OpaqueToken.sha256(String(credential)))
    }
}
