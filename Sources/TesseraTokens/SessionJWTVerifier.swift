public import Foundation

/// Verifies session JWTs offline with a project's public JWKS: what an app's own backend does.
///
/// A token verified offline can be up to five minutes stale after a revoke, by design; a backend
/// that needs revocation at once asks the Tessera server (`GET /v1/me`) instead.
///
/// A token's `external_id` is proven only when its `kind` is ``SessionKind/verified``: a project that
/// allows the client-asserted `user_id` identify issues `unverified` sessions whose `external_id`
/// anyone holding the publishable key can choose. A backend that acts on `external_id` should accept
/// only verified sessions:
///
/// ```swift
/// let verifier = try SessionJWTVerifier(jwks: jwks, audience: projectID, allowedKinds: [.verified])
/// ```
public struct SessionJWTVerifier: Sendable {
    private let verifier: ES256Verifier
    private let issuer: String?
    private let audience: String?
    private let allowedKinds: Set<SessionKind>?

    /// Creates a verifier.
    /// - Parameters:
    ///   - jwks: the project's published key set.
    ///   - issuer: when set, `iss` must equal it.
    ///   - audience: when set (the project ID), `aud` must equal it.
    ///   - allowedKinds: when set, the `kind` claim must be one of them (else
    ///     ``TokenError/Code/sessionKindNotAllowed``); nil accepts every kind.
    public init(
        jwks: JSONWebKeySet, issuer: String? = nil, audience: String? = nil, allowedKinds: Set<SessionKind>? = nil
    ) throws(KeyConfigurationError) {
        verifier = try ES256Verifier(keys: jwks.keys)
        self.issuer = issuer
        self.audience = audience
        self.allowedKinds = allowedKinds
    }

    /// Verifies `token` at `now` and returns its claims.
    public func verify(_ token: some StringProtocol, now: Date, leeway: TimeInterval = 60) throws(TokenError)
        -> SessionClaims
    {
        let claims = try verifier.verify(String(token), now: now, leeway: leeway, allowExpired: false)
        if let issuer, !claims.issuer.utf8.elementsEqual(issuer.utf8) {
            throw TokenError(.invalidClaims, "iss does not match.")
        }
        if let audience, !claims.audience.utf8.elementsEqual(audience.utf8) {
            throw TokenError(.audienceMismatch, "aud does not match.")
        }
        if let allowedKinds, !allowedKinds.contains(where: { $0.matches(claims.kind) }) {
            throw TokenError(.sessionKindNotAllowed, "Sessions of this kind are not accepted here.")
        }
        return claims
    }

    /// Verifies `token` at `now` as presented with a DPoP proof (or without one), and returns its claims.
    ///
    /// A token bound to a device key (`cnf.jkt`) is accepted only with a proof signed by that key for
    /// this very token (`ath`): verify the request's `DPoP` header first with ``DPoPProofVerifier``,
    /// passing the token as `accessToken`. A stolen bound token is worth nothing without the key.
    /// An unbound token is accepted with or without a proof.
    /// - Parameter proof: the request's verified proof, nil when it carried none.
    /// - Throws: the errors of ``verify(_:now:leeway:)``, ``TokenError/Code/dpopProofRequired`` for a
    ///   bound token without a proof, ``TokenError/Code/dpopKeyMismatch`` for a proof by another key,
    ///   ``TokenError/Code/dpopProofInvalid`` for a proof made for another token.
    public func verify(_ token: some StringProtocol, now: Date, leeway: TimeInterval = 60, proof: DPoPProof?)
        throws(TokenError) -> SessionClaims
    {
        let claims = try verify(token, now: now, leeway: leeway)
        if let proof {
            guard let ath = proof.accessTokenHash,
                OpaqueToken.constantTimeEquals(Array(ath.utf8), Array(DPoPProof.accessTokenHash(of: token).utf8))
            else {
                throw TokenError(.dpopProofInvalid, "The DPoP proof was not made for this token.")
            }
        }
        guard let jkt = claims.confirmation else { return claims }
        guard let proof else {
            throw TokenError(.dpopProofRequired, "This session is bound to a device key: send a DPoP proof.")
        }
        guard OpaqueToken.constantTimeEquals(Array(proof.thumbprint.utf8), Array(jkt.utf8)) else {
            throw TokenError(.dpopKeyMismatch, "The DPoP proof is signed by another key than the session's.")
        }
        return claims
    }
}
