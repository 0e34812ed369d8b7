import Crypto
import Foundation

// libFuzzer target: the identity-token codec (base64url, strict JSON, compact JWS) and
// `IdentityTokenVerifier.verify`. The first input byte picks a mode:
//   0  the rest is the token text, as received;
//   1  the rest is `header JSON ‖ 0x00 ‖ payload JSON`, MACed by the key the next byte picks,
//      so claims and header rules are reached past the MAC;
//   2  a valid token with one segment replaced, spliced or re-MACed from the rest;
//   3  the codec alone: base64url against Foundation, the strict JSON reader, the JWS parser.
// Beyond "no crash", every verdict is checked: errors are identity-token codes with the right
// status and no echo of the token; an accepted token carries a correct HMAC of its exact signing
// input under the real secret, is refused by an impostor secret with the same kid, verifies to the
// same claims under a two-secret verifier, obeys the claim rules, and re-mints to the same claims.

private enum Verifiers {
    static let configuration = IdentityTokenVerifier.Configuration(
        projectID: FuzzFixture.projectID, projectSlug: FuzzFixture.projectSlug)
    static let real = try! IdentityTokenVerifier(secrets: [FuzzFixture.secret], configuration: configuration)
    static let both = try! IdentityTokenVerifier(
        secrets: [FuzzFixture.otherSecret, FuzzFixture.secret], configuration: configuration)
    static let impostor = try! IdentityTokenVerifier(
        secrets: [FuzzFixture.impostorSecret], configuration: configuration)
    static let strict = try! IdentityTokenVerifier(
        secrets: [FuzzFixture.secret],
        configuration: .init(
            projectID: FuzzFixture.projectID, requireAudience: true, expectedIssuer: "https://backend.example",
            leeway: 0, maximumLifetime: 600))
    /// A looser configuration (huge lifetime ceiling): it must accept all `real` accepts, and not trap.
    static let wide = try! IdentityTokenVerifier(
        secrets: [FuzzFixture.secret],
        configuration: .init(
            projectID: FuzzFixture.projectID, projectSlug: FuzzFixture.projectSlug,
            leeway: 600, maximumLifetime: 1e300))
    static let minter = IdentityTokenMinter(secret: FuzzFixture.secret)

    /// Valid tokens to mutate in mode 2.
    static let seeds: [String] = {
        let now = FuzzFixture.now
        let minterWithoutKid = IdentityTokenMinter(secret: FuzzFixture.secret, includeKeyID: false)
        return [
            minter.mint(IdentityClaims(subject: "user-1", expiration: now.addingTimeInterval(300))),
            minterWithoutKid.mint(
                IdentityClaims(
                    subject: "user-2", expiration: now.addingTimeInterval(600), audience: ["prj_fuzz", "acme"],
                    issuedAt: now, notBefore: now, tokenID: "jti-1", issuer: "https://backend.example",
                    name: "Ada Lovelace", avatarURL: "https://img.example/a.png", email: "ada@example.com")),
            IdentityTokenMinter(secret: FuzzFixture.otherSecret).mint(
                IdentityClaims(subject: "user-3", expiration: now.addingTimeInterval(60), audience: ["acme"])),
        ]
    }()
}

private let identityCodes: Set<TokenError.Code> = [
    .invalidIdentityToken, .invalidSignature, .unsupportedAlgorithm, .identityTokenExpired,
    .identityTokenNotYetValid, .identityTokenLifetimeTooLong, .audienceMismatch, .invalidClaims,
    .invalidEmail, .invalidName, .invalidAvatarURL,
]
private let badRequestCodes: Set<TokenError.Code> = [.invalidClaims, .invalidEmail, .invalidName, .invalidAvatarURL]

private func verify(_ verifier: IdentityTokenVerifier, _ token: String) -> Result<IdentityClaims, TokenError> {
    Result { () throws(TokenError) in try verifier.verify(token, now: FuzzFixture.now) }
}

private func requireWellFormed(_ error: TokenError, _ token: String) {
    require(identityCodes.contains(error.code), "unexpected code \(error.code.rawValue)")
    require(error.httpStatus == (badRequestCodes.contains(error.code) ? 400 : 401), "wrong status for \(error)")
    requireNoEcho(error, token)
}

/// The HMAC of the signing input under `secret`, computed here without the codec.
private func hasValidMAC(_ token: String, _ secret: IdentitySecret) -> Bool {
    guard let parts = segments(token), let signature = Base64URL.decode(parts[2]) else { return false }
    let input = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    let key = SymmetricKey(data: Array(secret.value.utf8))
    return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: key)
}

private func check(_ token: String) {
    let result = verify(Verifiers.real, token)
    // The strict configuration only adds rules: it may refuse more, never accept what `real` refuses.
    switch verify(Verifiers.strict, token) {
    case .failure(let error): requireWellFormed(error, token)
    case .success(let claims):
        require((try? result.get()) == claims, "strict configuration accepted what the default refused")
        require(claims.issuer == "https://backend.example" && !claims.audience.isEmpty, "strict rules skipped")
    }
    let wide = verify(Verifiers.wide, token)
    if case .failure(let error) = wide { requireWellFormed(error, token) }
    switch result {
    case .failure(let error):
        requireWellFormed(error, token)
        if case .success = verify(Verifiers.both, token) {
            require(hasValidMAC(token, FuzzFixture.otherSecret), "two-secret verifier accepted without a valid MAC")
        }
    case .success(let claims):
        require(isCanonical(token), "accepted a token whose segments are not canonical base64url")
        require(hasValidMAC(token, FuzzFixture.secret), "accepted a token without a valid HMAC of its signing input")
        switch verify(Verifiers.impostor, token) {
        case .success: require(false, "a token verified under a different secret with the same kid")
        case .failure(let error): require(error.code == .invalidSignature, "impostor refusal was \(error.code)")
        }
        require((try? verify(Verifiers.real, token).get()) == claims, "verification is not deterministic")
        require((try? verify(Verifiers.both, token).get()) == claims, "two-secret verifier disagrees")
        require((try? wide.get()) == claims, "the widest configuration refused what the default accepts")
        checkRules(claims)
        checkRemint(claims)
    }
}

private func checkRules(_ claims: IdentityClaims) {
    let now = FuzzFixture.now.timeIntervalSince1970
    let leeway = Verifiers.configuration.leeway
    let exp = claims.expiration.timeIntervalSince1970
    require(now < exp + leeway, "accepted an expired token")
    require(exp - now <= Verifiers.configuration.maximumLifetime + leeway, "accepted an over-long lifetime")
    if let nbf = claims.notBefore { require(nbf.timeIntervalSince1970 <= now + leeway, "accepted before nbf") }
    if let iat = claims.issuedAt { require(iat.timeIntervalSince1970 <= now + leeway, "accepted a future iat") }
    require(ClaimRules.isValidSubject(claims.subject), "accepted an invalid sub")
    require(
        claims.audience.isEmpty || claims.audience.contains(FuzzFixture.projectID)
            || claims.audience.contains(FuzzFixture.projectSlug), "accepted a foreign aud")
    if let name = claims.name { require(ClaimRules.isValidName(name), "accepted an invalid name") }
    if let email = claims.email { require(ClaimRules.isValidEmail(email), "accepted an invalid email") }
    if let url = claims.avatarURL { require(ClaimRules.isValidAvatarURL(url), "accepted an invalid avatar URL") }
}

/// Claims a verifier returned, minted again, verify to the same claims (whole-second dates only).
private func checkRemint(_ claims: IdentityClaims) {
    // Minting must not trap on any claims the verifier returns (e.g. an iat of -1e300).
    let token = Verifiers.minter.mint(claims)
    let dates = [claims.expiration] + [claims.issuedAt, claims.notBefore].compactMap { $0 }
    guard dates.allSatisfy(isWholeSeconds) else { return }
    guard token.utf8.count <= 8 * 1024, let parts = segments(token), parts[1].utf8.count <= (4 * 1024 * 4 + 2) / 3
    else { return }
    switch verify(Verifiers.real, token) {
    case .success(let again): require(again == claims, "re-minted claims differ: \(again) vs \(claims)")
    case .failure(let error): require(false, "re-minted token refused: \(error.code.rawValue)")
    }
}

/// Mode 3: the codec layers on raw bytes.
private func checkCodec(_ bytes: [UInt8]) {
    // Base64URL: decode ∘ encode is the identity; an accepted text is the canonical spelling,
    // and agrees with Foundation's (padded, standard-alphabet) decoder.
    let encoded = Base64URL.encode(bytes)
    require(Base64URL.decode(encoded) == bytes, "base64url round trip failed")
    require(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"), "not base64url")
    let decoded = bytes.withUnsafeBytes { Base64URL.decode(bytes: $0) }
    let text = String(decoding: bytes, as: UTF8.self)
    if let decoded {
        require(Base64URL.encode(decoded).utf8.elementsEqual(bytes), "accepted a non-canonical spelling")
        require(Base64URL.decode(text) == decoded, "byte and string decoders disagree")
    }
    if bytes.allSatisfy({ $0 < 0x80 }) {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let lenient = text.contains("+") || text.contains("/") || text.contains("=")
        if !lenient, standard.utf8.count % 4 != 1 {
            standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
            let foundation = Data(base64Encoded: standard).map(Array.init)
            if let decoded { require(foundation == decoded, "Foundation decodes an accepted text differently") }
            if let foundation, Base64URL.encode(foundation) == text {
                require(decoded == foundation, "refused the canonical spelling of \(foundation.count) bytes")
            }
        }
    }
    // Strict JSON: whatever it accepts, Foundation's parser accepts too (it is the stricter one).
    if let object = StrictJSONReader.object(from: bytes) {
        require((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil, "strict reader accepted invalid JSON")
        var names = Set<[UInt8]>()
        for member in object.members {
            require(names.insert(Array(member.name.utf8)).inserted, "duplicate member accepted")
            require(member.isASCII == member.name.utf8.allSatisfy { $0 < 0x80 }, "isASCII flag wrong")
        }
    }
    // The JWS parser on the raw text.
    let token = String(decoding: bytes, as: UTF8.self)
    do {
        let jws = try CompactJWS.parse(token, malformed: .invalidIdentityToken)
        require(isCanonical(token), "parser accepted non-canonical segments")
        if let kid = jws.keyID { require(KeyID.isValid(kid), "parser accepted an invalid kid") }
    } catch {
        require(error.code == .invalidIdentityToken, "parser threw \(error.code.rawValue)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIdentityToken(_ data: UnsafeRawPointer?, _ size: Int) -> CInt {
    var input = FuzzReader(data, size)
    switch input.byte() % 4 {
    case 0:
        check(String(decoding: input.rest(), as: UTF8.self))
    case 1:
        let choice = input.byte()
        let (header, payload) = input.rest().splitOnce(0)
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let secret = [FuzzFixture.secret, FuzzFixture.otherSecret, FuzzFixture.impostorSecret][Int(choice % 3)]
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array(signingInput.utf8), using: SymmetricKey(data: Array(secret.value.utf8)))
        check(signingInput + "." + Base64URL.encode(Array(mac)))
    case 2:
        let seed = Verifiers.seeds[Int(input.byte()) % Verifiers.seeds.count]
        let segment = Int(input.byte() % 3)
        let operation = input.byte() % 4
        let rest = input.rest()
        var parts = seed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        switch operation {
        case 0: parts[segment] = String(decoding: rest, as: UTF8.self)
        case 1: parts[segment] = Base64URL.encode(rest)
        case 2:
            var bytes = Base64URL.decode(parts[segment]) ?? []
            for (offset, byte) in rest.enumerated() where !bytes.isEmpty {
                bytes[(offset * 7 + Int(byte)) % bytes.count] ^= byte
            }
            parts[segment] = Base64URL.encode(bytes)
        default:
            // Replace the segment and MAC the result with the real secret: reaches the claim rules.
            parts[min(segment, 1)] = Base64URL.encode(rest)
            let signingInput = parts[0] + "." + parts[1]
            let mac = HMAC<SHA256>.authenticationCode(
                for: Array(signingInput.utf8), using: SymmetricKey(data: Array(FuzzFixture.secret.value.utf8)))
            parts[2] = Base64URL.encode(Array(mac))
        }
        check(parts.joined(separator: "."))
    default:
        checkCodec(input.rest())
    }
    return 0
}
