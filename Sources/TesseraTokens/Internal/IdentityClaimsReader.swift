import Foundation

/// Turns a verified payload into ``IdentityClaims``, applying every claim rule.
///
/// The payload's members are read in one pass; only ASCII member names can match a claim name,
/// and for those Swift's `==` is a byte comparison.
struct IdentityClaimsReader {
    let configuration: IdentityTokenVerifier.Configuration
    /// Seconds since 1970.
    let now: Double

    /// The claims as they appear, before any rule.
    private struct Raw {
        var sub: JSONValue?
        var exp: JSONValue?
        var nbf: JSONValue?
        var iat: JSONValue?
        var aud: JSONValue?
        var jti: JSONValue?
        var iss: JSONValue?
        var email: JSONValue?
        /// Aliases in order of precedence: name, display_name, displayName.
        var names: (JSONValue?, JSONValue?, JSONValue?)
        /// Aliases in order of precedence: avatar_url, avatarUrl, picture.
        var avatars: (JSONValue?, JSONValue?, JSONValue?)

        init(_ payload: JSONObject) {
            for member in payload.members where member.isASCII {
                switch member.name {
                case "sub": sub = member.value
                case "exp": exp = member.value
                case "nbf": nbf = member.value
                case "iat": iat = member.value
                case "aud": aud = member.value
                case "jti": jti = member.value
                case "iss": iss = member.value
                case "email": email = member.value
                case "name": names.0 = member.value
                case "display_name": names.1 = member.value
                case "displayName": names.2 = member.value
                case "avatar_url": avatars.0 = member.value
                case "avatarUrl": avatars.1 = member.value
                case "picture": avatars.2 = member.value
                default: continue
                }
            }
        }
    }

    func read(_ payload: JSONObject) throws(TokenError) -> IdentityClaims {
        let raw = Raw(payload)
        // Types of the time claims first: a malformed claim set says so before any time rule.
        guard let exp = try number(raw.exp, "exp") else {
            throw TokenError(.invalidClaims, "The exp claim is required.")
        }
        let nbf = try number(raw.nbf, "nbf")
        let iat = try number(raw.iat, "iat")
        let audience = try audienceList(raw.aud)
        let tokenID = try string(raw.jti, "jti")
        if let tokenID, !(1...255).contains(tokenID.unicodeScalars.count) {
            throw TokenError(.invalidClaims, "jti must be 1 to 255 characters.")
        }
        let issuer = try string(raw.iss, "iss")

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
                "exp lies more than \(configuration.maximumLifetime.numericDate) seconds ahead."
            )
        }
        // Time before identity: RFC 7515's example token has no sub, and is reported as expired.
        guard let subValue = raw.sub else { throw TokenError(.invalidClaims, "The sub claim is required.") }
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

        let name = try firstPresent(raw.names, ("name", "display_name", "displayName"), code: .invalidName)
        if let name, !ClaimRules.isValidName(name) {
            throw TokenError(.invalidName, "The name must be 1 to 200 characters without control characters.")
        }
        let avatarURL = try firstPresent(raw.avatars, ("avatar_url", "avatarUrl", "picture"), code: .invalidAvatarURL)
        if let avatarURL, !ClaimRules.isValidAvatarURL(avatarURL) {
            throw TokenError(.invalidAvatarURL, "The avatar must be an https URL of at most 2048 characters.")
        }
        let email = try firstPresent((raw.email, nil, nil), ("email", "", ""), code: .invalidEmail)
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
        let matches = audience.contains { candidate in
            candidate.utf8.elementsEqual(configuration.projectID.utf8)
                || configuration.projectSlug.map { candidate.utf8.elementsEqual($0.utf8) } == true
        }
        guard matches else { throw TokenError(.audienceMismatch, "aud names neither this project's ID nor its slug.") }
    }

    private func number(_ value: JSONValue?, _ name: String) throws(TokenError) -> Double? {
        guard let value else { return nil }
        guard case .number(let number) = value else {
            throw TokenError(.invalidClaims, "\(name) must be a NumericDate (a number).")
        }
        return number
    }

    private func string(_ value: JSONValue?, _ name: String) throws(TokenError) -> String? {
        guard let value else { return nil }
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

    /// The first alias present with a non-null value; a non-string value is refused with `code`.
    private func firstPresent(
        _ values: (JSONValue?, JSONValue?, JSONValue?),
        _ names: (StaticString, StaticString, StaticString),
        code: TokenError.Code
    ) throws(TokenError) -> String? {
        if let value = try present(values.0, names.0, code) { return value }
        if let value = try present(values.1, names.1, code) { return value }
        return try present(values.2, names.2, code)
    }

    private func present(_ value: JSONValue?, _ name: StaticString, _ code: TokenError.Code) throws(TokenError)
        -> String?
    {
        switch value {
        case nil, .null?: return nil
        case .string(let string)?: return string
        default: throw TokenError(code, "\(name) must be a string.")
        }
    }
}
