import Foundation

/// Turns a verified payload into ``IdentityClaims``, applying every claim rule.
struct IdentityClaimsReader {
    let configuration: IdentityTokenVerifier.Configuration
    /// Seconds since 1970.
    let now: Double

    func read(_ payload: JSONObject) throws(TokenError) -> IdentityClaims {
        // Types of the time claims first: a malformed claim set says so before any time rule.
        guard let exp = try number("exp", in: payload) else {
            throw TokenError(.invalidClaims, "The exp claim is required.")
        }
        let nbf = try number("nbf", in: payload)
        let iat = try number("iat", in: payload)
        let audience = try audienceList(payload["aud"])
        let tokenID = try string("jti", in: payload)
        if let tokenID, !(1...255).contains(tokenID.unicodeScalars.count) {
            throw TokenError(.invalidClaims, "jti must be 1 to 255 characters.")
        }
        let issuer = try string("iss", in: payload)

        let leeway = configuration.leeway
        guard now < exp + leeway else { throw TokenError(.identityTokenExpired, "The identity token has expired.") }
        if let nbf, nbf > now + leeway {
            throw TokenError(.identityTokenNotYetValid, "The identity token is not valid yet (nbf).")
        }
        if let iat, iat > now + leeway {
            throw TokenError(.identityTokenNotYetValid, "The identity token was issued in the future (iat).")
        }
        guard exp - now <= configuration.maximumLifetime + leeway else {
            throw TokenError(
                .identityTokenLifetimeTooLong,
                "exp lies more than \(Int(configuration.maximumLifetime)) seconds ahead."
            )
        }
        // Time before identity: RFC 7515's example token has no sub, and is reported as expired.
        guard let subValue = payload["sub"] else { throw TokenError(.invalidClaims, "The sub claim is required.") }
        guard case .string(let subject) = subValue else { throw TokenError(.invalidClaims, "sub must be a string.") }
        try checkAudience(audience)
        if let expected = configuration.expectedIssuer {
            guard let issuer, issuer.utf8.elementsEqual(expected.utf8) else {
                throw TokenError(.invalidClaims, "iss does not match the project's expected issuer.")
            }
        }
        guard ClaimRules.isValidSubject(subject) else {
            throw TokenError(.invalidClaims, "sub must be 1 to 255 characters without control characters.")
        }

        let name = try firstPresent(["name", "display_name", "displayName"], in: payload, code: .invalidName)
        if let name, !ClaimRules.isValidName(name) {
            throw TokenError(.invalidName, "The name must be 1 to 200 characters without control characters.")
        }
        let avatarURL = try firstPresent(["avatar_url", "avatarUrl", "picture"], in: payload, code: .invalidAvatarURL)
        if let avatarURL, !ClaimRules.isValidAvatarURL(avatarURL) {
            throw TokenError(.invalidAvatarURL, "The avatar must be an https URL of at most 2048 characters.")
        }
        let email = try firstPresent(["email"], in: payload, code: .invalidEmail)
        if let email, !ClaimRules.isValidEmail(email) {
            throw TokenError(.invalidEmail, "The email is not a valid address.")
        }

        return IdentityClaims(
            subject: subject,
            expiration: Date(timeIntervalSince1970: exp),
            audience: audience,
            issuedAt: iat.map(Date.init(timeIntervalSince1970:)),
            notBefore: nbf.map(Date.init(timeIntervalSince1970:)),
            tokenID: tokenID,
            issuer: issuer,
            name: name,
            avatarURL: avatarURL,
            email: email
        )
    }

    private func checkAudience(_ audience: [String]) throws(TokenError) {
        guard !audience.isEmpty else {
            if configuration.requireAudience {
                throw TokenError(.audienceMismatch, "This project requires an aud claim.")
            }
            return
        }
        let accepted = [configuration.projectID] + (configuration.projectSlug.map { [$0] } ?? [])
        let matches = audience.contains { candidate in
            accepted.contains { candidate.utf8.elementsEqual($0.utf8) }
        }
        guard matches else { throw TokenError(.audienceMismatch, "aud names neither this project's ID nor its slug.") }
    }

    private func number(_ name: String, in payload: JSONObject) throws(TokenError) -> Double? {
        guard let value = payload[name] else { return nil }
        guard case .number(let number) = value else {
            throw TokenError(.invalidClaims, "\(name) must be a NumericDate (a number).")
        }
        return number
    }

    private func string(_ name: String, in payload: JSONObject) throws(TokenError) -> String? {
        guard let value = payload[name] else { return nil }
        guard case .string(let string) = value else { throw TokenError(.invalidClaims, "\(name) must be a string.") }
        return string
    }

    private func audienceList(_ value: JSONValue?) throws(TokenError) -> [String] {
        switch value {
        case nil: return []
        case .string(let audience)?: return [audience]
        case .array(let elements)?:
            guard !elements.isEmpty else { throw TokenError(.invalidClaims, "aud must not be an empty array.") }
            var audiences: [String] = []
            for element in elements {
                guard case .string(let audience) = element else {
                    throw TokenError(.invalidClaims, "aud must be a string or an array of strings.")
                }
                audiences.append(audience)
            }
            return audiences
        default:
            throw TokenError(.invalidClaims, "aud must be a string or an array of strings.")
        }
    }

    /// The first of `names` present with a non-null value; a non-string value is refused with `code`.
    private func firstPresent(
        _ names: [String],
        in payload: JSONObject,
        code: TokenError.Code
    ) throws(TokenError) -> String? {
        for name in names {
            switch payload[name] {
            case nil, .null?: continue
            case .string(let value)?: return value
            default: throw TokenError(code, "\(name) must be a string.")
            }
        }
        return nil
    }
}
