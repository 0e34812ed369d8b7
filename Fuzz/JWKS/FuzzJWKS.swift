import Crypto
import Foundation

// libFuzzer target: `JSONWebKeySet(json:)`, the strict JWKS reader an app backend feeds with what it
// downloads, and the Codable path plus `SessionJWTVerifier(jwks:)` on the same bytes.
// Invariants: a set that is read holds only EC P-256 ES256 signing keys with valid, distinct kids;
// it writes back (`jsonData()`) to bytes that read to the same set, through both readers; and a
// verifier built from it accepts the fixture's session JWTs exactly when it holds the real public key
// under the token's kid: no other key, whatever its kid, verifies them.

private enum Known {
    static let ring = try! SessionKeyRing(
        signingKey: FuzzFixture.signingKey, retiredKeys: [FuzzFixture.retiredKey.publicJWK])
    static let now = FuzzFixture.now
    static let token = ring.sign(
        SessionClaims(
            issuer: FuzzFixture.issuer, audience: FuzzFixture.projectID, subject: "usr_1", sessionID: "ses_1",
            expiration: now.addingTimeInterval(300), issuedAt: now, notBefore: now, kind: "anonymous",
            externalID: nil))
    static let realKey = FuzzFixture.signingKey.publicJWK
}

private func checkVerifier(_ set: JSONWebKeySet) {
    let verifier: SessionJWTVerifier
    do {
        verifier = try SessionJWTVerifier(jwks: set)
    } catch {
        return
    }
    let holdsRealKey = set.keys.contains { $0.kid == "sk1" && $0.x == Known.realKey.x && $0.y == Known.realKey.y }
    switch Result(catching: { () throws(TokenError) in try verifier.verify(Known.token, now: Known.now) }) {
    case .success: require(holdsRealKey, "a JWKS without the real key verified the token")
    case .failure(let error):
        require(!holdsRealKey, "a JWKS with the real key refused the token: \(error.code.rawValue)")
        require(error.code == .invalidSignature, "refusal under a foreign key was \(error.code.rawValue)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWKS(_ data: UnsafeRawPointer?, _ size: Int) -> CInt {
    var input = FuzzReader(data, size)
    let bytes = input.rest()
    // The Codable path is lenient by design; whatever it yields, building a verifier must not crash.
    if let decoded = try? JSONDecoder().decode(JSONWebKeySet.self, from: Data(bytes)) {
        checkVerifier(decoded)
    }
    let set: JSONWebKeySet
    do {
        set = try JSONWebKeySet(json: bytes)
    } catch {
        require(!error.message.isEmpty, "empty error message")
        return 0
    }
    require(Set(set.keys.map(\.kid)).count == set.keys.count, "duplicate kid accepted")
    for key in set.keys {
        require(key.kty == "EC" && key.crv == "P-256", "accepted a non-P-256 key")
        require(key.use == nil || key.use == "sig", "accepted use \(key.use ?? "")")
        require(key.alg == nil || key.alg == "ES256", "accepted alg \(key.alg ?? "")")
        require(KeyID.isValid(key.kid), "accepted an invalid kid")
        require((try? key.publicKey()) != nil, "accepted a key that does not load")
    }
    let written = set.jsonData()
    require((try? JSONWebKeySet(json: written)) == set, "jsonData() does not read back to the same set")
    require((try? JSONDecoder().decode(JSONWebKeySet.self, from: Data(written))) == set, "Codable disagrees")
    checkVerifier(set)
    return 0
}
