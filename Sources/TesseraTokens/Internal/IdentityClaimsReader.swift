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

    /// Reads `payload` and applies every rule, failing at the first broken one.
    func read(_ payload: JSONObject) throws(TokenError) -> IdentityClaims {
        var recorder = FailFastRecorder()
        // A fail-fast recorder throws at the first failure, and every value is present without one.
        guard let claims = try read(payload, recording: &recorder) else {
            throw TokenError(.invalidClaims, "The claims could not be read.")
        }
        return claims
    }

    /// Reads `payload` and applies every rule in the verifier's order, telling `recorder` each verdict.
    ///
    /// A rule whose input an earlier failure left unknown (the time of an `exp` that is not a number)
    /// is not recorded; every other rule is, so an inspection reports each problem of a token.
    /// - Returns: the claims, or `nil` when a value is missing because a rule failed (possible only
    ///   with a recorder that does not throw).
    func read<Recorder: IdentityCheckRecorder>(_ payload: JSONObject, recording recorder: inout Recorder)
        throws(TokenError) -> IdentityClaims?
    {
        let raw = Raw(payload)
        let now = now
        // Types of the time claims first: a malformed claim set says so before any time rule.
        let exp = try recorder.record(
            .expType,
            { () throws(TokenError) -> Double in
                guard let exp = try number(raw.exp, "exp") else {
                    throw TokenError(.invalidClaims, "The exp claim is required.")
                }
                return exp
            }, { "exp is a NumericDate: \(InspectionText.number($0))." })
        let nbf = try recorder.record(
            .notBeforeType, { () throws(TokenError) in try number(raw.nbf, "nbf") },
            {
                $0.map { "nbf is a NumericDate: \(InspectionText.number($0))." } ?? "No nbf."
            })
        let iat = try recorder.record(
            .issuedAtType, { () throws(TokenError) in try number(raw.iat, "iat") },
            {
                $0.map { "iat is a NumericDate: \(InspectionText.number($0))." } ?? "No iat."
            })
        let audience = try recorder.record(
            .audienceType, { () throws(TokenError) in try audienceList(raw.aud) },
            {
                $0.isEmpty ? "No aud." : "aud is \($0.map(InspectionText.quoted).joined(separator: ", "))."
            })
        let tokenID = try recorder.record(
            .tokenID,
            { () throws(TokenError) -> String? in
                let tokenID = try string(raw.jti, "jti")
                if let tokenID, !(1...255).contains(tokenID.unicodeScalars.count) {
                    throw TokenError(.invalidClaims, "jti must be 1 to 255 characters.")
                }
                return tokenID
            }, { $0.map { "jti is \(InspectionText.quoted($0)): the token is single-use." } ?? "No jti." })
        let issuer = try recorder.record(
            .issuerType, { () throws(TokenError) in try string(raw.iss, "iss") },
            {
                $0.map { "iss is \(InspectionText.quoted($0))." } ?? "No iss."
            })

        let leeway = configuration.leeway
        // Details are built only by a recorder that keeps them: nothing here may run on the verify path.
        var leewayText: String { "leeway \(InspectionText.number(leeway)) s" }
        if let exp {
            try recorder.record(
                .expiration,
                now < exp + leeway ? nil : TokenError(.identityTokenExpired, "The identity token has expired.")
            ) { "\(InspectionText.claim("exp", exp, now: now)); \(leewayText)." }
        }
        if let nbf {
            try recorder.record(
                .notBefore,
                nbf.map { $0 > now + leeway } == true
                    ? TokenError(.identityTokenNotYetValid, "The identity token is not valid yet (nbf).") : nil,
                { nbf.map { "\(InspectionText.claim("nbf", $0, now: now)); \(leewayText)." } ?? "No nbf." })
        }
        if let iat {
            try recorder.record(
                .issuedAt,
                iat.map { $0 > now + leeway } == true
                    ? TokenError(.identityTokenNotYetValid, "The identity token was issued in the future (iat).") : nil,
                { iat.map { "\(InspectionText.claim("iat", $0, now: now)); \(leewayText)." } ?? "No iat." })
        }
        if let exp {
            let maximum = configuration.maximumLifetime
            try recorder.record(
                .lifetime,
                exp - now <= maximum + leeway
                    ? nil
                    : TokenError(
                        .identityTokenLifetimeTooLong, "exp lies more than \(maximum.numericDate) seconds ahead.")
            ) {
                "exp lies \(InspectionText.number(exp - now)) s ahead; at most \(InspectionText.number(maximum)) s, \(leewayText)."
            }
        }
        // Time before identity: RFC 7515's example token has no sub, and is reported as expired.
        let subject = try recorder.record(
            .subjectType,
            { () throws(TokenError) -> String in
                guard let subValue = raw.sub else { throw TokenError(.invalidClaims, "The sub claim is required.") }
                guard case .string(let subject) = subValue else {
                    throw TokenError(.invalidClaims, "sub must be a string.")
                }
                return subject
            }, { _ in "sub is a string." })
        if let audience {
            let failure = failure { () throws(TokenError) in try checkAudience(audience) }
            try recorder.record(.audience, failure) {
                failure?.message
                    ?? (audience.isEmpty
                        ? "No aud, and this project does not require one."
                        : "aud names this project.")
            }
        }
        if let issuer {
            let expected = configuration.expectedIssuer
            let matches = expected.map { expected in issuer.map { $0.utf8.elementsEqual(expected.utf8) } == true }
            try recorder.record(
                .issuer,
                matches == false
                    ? TokenError(.invalidClaims, "iss does not match the project's expected issuer.") : nil
            ) {
                guard let expected else { return "The project expects no particular issuer." }
                let actual = issuer.map(InspectionText.quoted) ?? "absent"
                return "iss is \(actual); the project expects \(InspectionText.quoted(expected))."
            }
        }
        if let subject {
            try recorder.record(
                .subject,
                ClaimRules.isValidSubject(subject)
                    ? nil
                    : TokenError(.invalidClaims, "sub must be 1 to 255 characters without control characters.")
            ) { "sub is \(InspectionText.quoted(subject))." }
        }

        let name = try recorder.record(
            .name,
            { () throws(TokenError) -> String? in
                let name = try firstPresent(raw.names, ("name", "display_name", "displayName"), code: .invalidName)
                if let name, !ClaimRules.isValidName(name) {
                    throw TokenError(.invalidName, "The name must be 1 to 200 characters without control characters.")
                }
                return name
            }, { $0.map { "The name is \(InspectionText.quoted($0))." } ?? "No name." })
        let avatarURL = try recorder.record(
            .avatarURL,
            { () throws(TokenError) -> String? in
                let avatarURL = try firstPresent(
                    raw.avatars, ("avatar_url", "avatarUrl", "picture"), code: .invalidAvatarURL)
                if let avatarURL, !ClaimRules.isValidAvatarURL(avatarURL) {
                    throw TokenError(.invalidAvatarURL, "The avatar must be an https URL of at most 2048 characters.")
                }
                return avatarURL
            }, { $0.map { "The avatar is \(InspectionText.quoted($0))." } ?? "No avatar." })
        let email = try recorder.record(
            .email,
            { () throws(TokenError) -> String? in
                let email = try firstPresent((raw.email, nil, nil), ("email", "", ""), code: .invalidEmail)
                if let email, !ClaimRules.isValidEmail(email) {
                    throw TokenError(.invalidEmail, "The email is not a valid address.")
                }
                return email
            }, { $0.map { "The email is \(InspectionText.quoted($0))." } ?? "No email." })

        guard let exp, let nbf, let iat, let audience, let tokenID, let issuer, let subject, let name, let avatarURL,
            let email
        else { return nil }
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
