import Crypto
import Foundation

// libFuzzer target: session JWTs (ES256, typ session+jwt, kid) through `SessionJWTVerifier`,
// `SessionKeyRing.verify` and `SessionClaims.unverified(from:)` (which the server runs on
// untrusted input before it picks a project). The first input byte picks a mode:
//   0  the rest is the token text, as received;
//   1  the rest is `header JSON ‖ 0x00 ‖ payload JSON`, signed with the key the next byte picks;
//   2  a valid token with one segment replaced or bit-flipped from the rest;
//   3  a valid token whose signature is replaced by the rest (raw r ‖ s bytes).
// Invariants: errors carry session codes and never echo the token; an accepted token's signature
// verifies over its exact signing input with the real public key (checked here without the codec),
// an impostor JWKS with the same kids refuses it as invalid_signature, the ring and the JWKS verifier
// agree, the unverified reader returns the same claims, and the claims re-sign to themselves.

private enum Keys {
    static let ring = try! SessionKeyRing(
        signingKey: FuzzFixture.signingKey, retiredKeys: [FuzzFixture.retiredKey.publicJWK])
    static let retiredRing = try! SessionKeyRing(signingKey: FuzzFixture.retiredKey)
    static let verifier = try! SessionJWTVerifier(jwks: ring.jwks)
    static let pinned = try! SessionJWTVerifier(
        jwks: ring.jwks, issuer: FuzzFixture.issuer, audience: FuzzFixture.projectID)
    static let impostor = try! SessionJWTVerifier(
        jwks: JSONWebKeySet(keys: [
            FuzzFixture.impostorSigningKey.publicJWK, FuzzFixture.impostorRetiredKey.publicJWK,
        ]))
    static let publicKeys: [String: P256.Signing.PublicKey] = [
        "sk1": FuzzFixture.signingKey.privateKey.publicKey,
        "sk0": FuzzFixture.retiredKey.privateKey.publicKey,
    ]
    static let privateKeys = [
        FuzzFixture.signingKey.privateKey, FuzzFixture.retiredKey.privateKey,
        FuzzFixture.impostorSigningKey.privateKey,
    ]

    static func claims(_ offset: TimeInterval, kind: String, externalID: String?) -> SessionClaims {
        let now = FuzzFixture.now
        return SessionClaims(
            issuer: FuzzFixture.issuer, audience: FuzzFixture.projectID, subject: "usr_1", sessionID: "ses_1",
            expiration: now.addingTimeInterval(offset + 300), issuedAt: now.addingTimeInterval(offset),
            notBefore: now.addingTimeInterval(offset), kind: kind, externalID: externalID)
    }

    /// Valid tokens to mutate in modes 2 and 3.
    static let seeds: [String] = [
        ring.sign(claims(0, kind: "anonymous", externalID: nil)),
        ring.sign(claims(-100, kind: "verified", externalID: "user-42")),
        retiredRing.sign(claims(-10, kind: "unverified", externalID: "é")),
    ]
}

private let sessionCodes: Set<TokenError.Code> = [
    .invalidToken, .invalidSignature, .unsupportedAlgorithm, .tokenExpired, .tokenNotYetValid,
]

private func requireWellFormed(_ error: TokenError, _ token: String, extra: Set<TokenError.Code> = []) {
    require(sessionCodes.contains(error.code) || extra.contains(error.code), "unexpected code \(error.code.rawValue)")
    requireNoEcho(error, token)
}

/// The ECDSA signature over the exact signing input, checked with Crypto directly.
private func hasValidSignature(_ token: String, kid: String) -> Bool {
    guard let key = Keys.publicKeys[kid], let parts = segments(token), let raw = Base64URL.decode(parts[2]),
        let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw)
    else { return false }
    let input = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    return key.isValidSignature(signature, for: input)
}

private func check(_ token: String) {
    let now = FuzzFixture.now
    let result = Result { () throws(TokenError) in try Keys.verifier.verify(token, now: now) }
    let ringResult = Result { () throws(TokenError) in try Keys.ring.verify(token, now: now) }
    let lenient = Result { () throws(TokenError) in try Keys.ring.verify(token, now: now, allowExpired: true) }
    let unverified = Result { () throws(TokenError) in try SessionClaims.unverified(from: token) }
    switch unverified {
    case .failure(let error): requireWellFormed(error, token)
    case .success(let claims):
        // The server reads these claims before any signature check: encoding or re-signing them
        // must not trap, whatever numbers the token carries.
        _ = try? JSONEncoder().encode(claims)
        _ = Keys.ring.sign(claims)
    }
    if case .failure(let error) = lenient {
        requireWellFormed(error, token)
        require(error.code != .tokenExpired, "allowExpired still refused as expired")
    }
    switch (result, ringResult) {
    case (.failure(let error), .failure(let ringError)):
        requireWellFormed(error, token)
        require(error == ringError, "ring and JWKS verifier disagree: \(error.code) vs \(ringError.code)")
    case (.success(let claims), .success(let ringClaims)):
        require(claims == ringClaims, "ring and JWKS verifier return different claims")
        checkAccepted(token, claims)
    default:
        require(false, "ring and JWKS verifier disagree on acceptance")
    }
    switch Result(catching: { () throws(TokenError) in try Keys.pinned.verify(token, now: now) }) {
    case .failure(let error): requireWellFormed(error, token, extra: [.invalidClaims, .audienceMismatch])
    case .success(let claims):
        require((try? result.get()) == claims, "pinned verifier accepted what the plain one refused")
        require(claims.issuer == FuzzFixture.issuer && claims.audience == FuzzFixture.projectID, "iss/aud skipped")
    }
}

private func checkAccepted(_ token: String, _ claims: SessionClaims) {
    let now = FuzzFixture.now.timeIntervalSince1970
    guard let parts = segments(token), let headerBytes = Base64URL.decode(parts[0]),
        let header = StrictJSONReader.object(from: headerBytes), case .string(let kid)? = header["kid"]
    else { return require(false, "accepted a token without a readable header and kid") }
    require(header["alg"] == .string("ES256") && header["typ"] == .string("session+jwt"), "accepted a wrong header")
    require(isCanonical(token), "accepted non-canonical base64url")
    require(hasValidSignature(token, kid: kid), "accepted a token whose signature does not verify")
    switch Result(catching: { () throws(TokenError) in try Keys.impostor.verify(token, now: FuzzFixture.now) }) {
    case .success: require(false, "a token verified under an impostor key with the same kid")
    case .failure(let error): require(error.code == .invalidSignature, "impostor refusal was \(error.code)")
    }
    require((try? SessionClaims.unverified(from: token)) == claims, "unverified reader disagrees")
    require(now < claims.expiration.timeIntervalSince1970 + 60, "accepted an expired session JWT")
    require(claims.notBefore.timeIntervalSince1970 <= now + 60, "accepted a session JWT before nbf")
    // Re-signed by the ring, the claims verify to themselves (whole-second dates only).
    let dates = [claims.expiration, claims.issuedAt, claims.notBefore]
    if dates.allSatisfy(isWholeSeconds) {
        let again = Keys.ring.sign(claims)
        if again.utf8.count <= 8 * 1024, let parts = segments(again), parts[1].utf8.count <= (4 * 1024 * 4 + 2) / 3 {
            require((try? Keys.verifier.verify(again, now: FuzzFixture.now)) == claims, "re-signed claims differ")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSessionJWT(_ data: UnsafeRawPointer?, _ size: Int) -> CInt {
    var input = FuzzReader(data, size)
    switch input.byte() % 4 {
    case 0:
        check(String(decoding: input.rest(), as: UTF8.self))
    case 1:
        let key = Keys.privateKeys[Int(input.byte()) % Keys.privateKeys.count]
        let (header, payload) = input.rest().splitOnce(0)
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try! key.signature(for: Array(signingInput.utf8))
        check(signingInput + "." + Base64URL.encode(signature.rawRepresentation))
    case 2:
        let seed = Keys.seeds[Int(input.byte()) % Keys.seeds.count]
        let segment = Int(input.byte() % 3)
        let replace = input.byte() % 2 == 0
        let rest = input.rest()
        var parts = seed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if replace {
            parts[segment] = String(decoding: rest, as: UTF8.self)
        } else {
            var bytes = Base64URL.decode(parts[segment]) ?? []
            for (offset, byte) in rest.enumerated() where !bytes.isEmpty {
                bytes[(offset * 7 + Int(byte)) % bytes.count] ^= byte
            }
            parts[segment] = Base64URL.encode(bytes)
        }
        check(parts.joined(separator: "."))
    default:
        let seed = Keys.seeds[Int(input.byte()) % Keys.seeds.count]
        var parts = seed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[2] = Base64URL.encode(input.rest())
        check(parts.joined(separator: "."))
    }
    return 0
}
