import Crypto
public import Foundation

/// Verifies identity tokens: compact JWS, HS256, signed by the app's backend with a project's identity secret.
///
/// The verifier follows the Tessera wire contract to the letter. The header is checked first
/// (structure, `alg`, forbidden members, `kid`), then the MAC, and only then any claim, so a token
/// that is both badly signed and expired reports the signature. A `kid` selects exactly one secret
/// and an unknown `kid` is refused, never retried with another key; without a `kid`, every active
/// secret is tried, which is what makes rotation painless.
///
/// ```swift
/// let verifier = try IdentityTokenVerifier(
///     secrets: [secret],
///     configuration: .init(projectID: "prj_123", projectSlug: "acme")
/// )
/// let claims = try verifier.verify(token, now: Date())
/// print(claims.subject)
/// ```
public struct IdentityTokenVerifier: Sendable {
    /// The project's rules for identity tokens.
    public struct Configuration: Sendable, Hashable {
        /// The project ID; an `aud` that contains it is accepted.
        public var projectID: String
        /// The project slug; an `aud` that contains it is accepted too.
        public var projectSlug: String?
        /// Refuse tokens without `aud`.
        public var requireAudience: Bool
        /// When set, `iss` must be present and equal to it byte for byte.
        public var expectedIssuer: String?
        /// Clock-skew allowance for `exp`, `nbf`, `iat` and the lifetime ceiling, in seconds.
        public var leeway: TimeInterval
        /// How far ahead `exp` may lie, in seconds.
        public var maximumLifetime: TimeInterval

        /// Creates a configuration.
        /// - Parameters:
        ///   - projectID: the project ID, accepted as an audience.
        ///   - projectSlug: the project slug, accepted as an audience.
        ///   - requireAudience: whether a token without `aud` is refused.
        ///   - expectedIssuer: the required `iss`, or `nil` to ignore `iss`.
        ///   - leeway: clock-skew allowance in seconds (default 60).
        ///   - maximumLifetime: the furthest `exp` may lie ahead, in seconds (default 3600).
        public init(
            projectID: String,
            projectSlug: String? = nil,
            requireAudience: Bool = false,
            expectedIssuer: String? = nil,
            leeway: TimeInterval = 60,
            maximumLifetime: TimeInterval = 3600
        ) {
            self.projectID = projectID
            self.projectSlug = projectSlug
            self.requireAudience = requireAudience
            self.expectedIssuer = expectedIssuer
            self.leeway = leeway
            self.maximumLifetime = maximumLifetime
        }
    }

    /// The most identity secrets a project may have active at once.
    public static let maximumActiveSecrets = 3

    /// The rules applied.
    public let configuration: Configuration
    /// Each secret's HMAC with its key already absorbed: copied per token, it saves the two
    /// key-pad compressions every fresh `HMAC(key:)` performs (the hasher state is copy-on-write).
    private let keys: [(kid: String, keyed: HMAC<SHA256>)]

    /// Creates a verifier.
    /// - Parameters:
    ///   - secrets: the project's active identity secrets, at most three, with distinct `kid`s.
    ///     With none, every token is refused with `invalid_signature`.
    ///   - configuration: the project's rules.
    public init(secrets: [IdentitySecret], configuration: Configuration) throws(KeyConfigurationError) {
        guard secrets.count <= Self.maximumActiveSecrets else {
            throw KeyConfigurationError("A project has at most \(Self.maximumActiveSecrets) active identity secrets.")
        }
        guard Set(secrets.map(\.kid)).count == secrets.count else {
            throw KeyConfigurationError("Identity secrets must have distinct kids.")
        }
        guard configuration.leeway >= 0, configuration.leeway.isFinite,
            configuration.maximumLifetime > 0, configuration.maximumLifetime.isFinite
        else {
            throw KeyConfigurationError("Leeway must be ≥ 0 and the maximum lifetime > 0.")
        }
        self.init(rawKeys: secrets.map { ($0.kid, Array($0.value.utf8)) }, configuration: configuration)
    }

    /// Creates a verifier from raw key bytes, without the checks on length and count (for test vectors).
    init(rawKeys: [(kid: String, key: [UInt8])], configuration: Configuration) {
        self.configuration = configuration
        self.keys = rawKeys.map { ($0.kid, HMAC<SHA256>(key: SymmetricKey(data: $0.key))) }
    }

    /// Verifies `token` at time `now` and returns its claims.
    /// - Throws: ``TokenError`` with one of the wire contract's identity-token codes.
    public func verify(_ token: some StringProtocol, now: Date) throws(TokenError) -> IdentityClaims {
        try verify(String(token), now: now)
    }

    /// Verifies `token` at time `now` and returns its claims.
    /// - Throws: ``TokenError`` with one of the wire contract's identity-token codes.
    public func verify(_ token: String, now: Date) throws(TokenError) -> IdentityClaims {
        try verifyReportingKey(token, now: now).claims
    }

    /// Verifies `token` at time `now` and returns its claims with the `kid` of the secret that verified it.
    /// - Throws: ``TokenError`` with one of the wire contract's identity-token codes.
    public func verifyReportingKey(_ token: String, now: Date) throws(TokenError) -> (
        claims: IdentityClaims, keyID: String
    ) {
        var recorder = FailFastRecorder()
        let outcome = try evaluate(token, now: now, recording: &recorder)
        // A fail-fast recorder throws at the first failure, and both values are present without one.
        guard let keyID = outcome.keyID, let claims = outcome.claims else {
            throw TokenError(.invalidSignature, "The signature does not verify.")
        }
        return (claims, keyID)
    }

    /// What ``evaluate(_:now:recording:)`` established.
    struct Evaluation {
        /// The `kid` of the secret whose MAC matched.
        var keyID: String?
        /// The claims, when every value could be read (check the recorder for failures).
        var claims: IdentityClaims?
    }

    /// Every check of the verifier, in its order, each verdict told to `recorder`.
    ///
    /// `verify` and `inspect` both run this one function, so an inspection's first failure is by
    /// construction the error `verify` throws. After a failed check, the checks that still make
    /// sense go on (an inspection reports them); those that lost their input are skipped.
    @inline(__always)
    func evaluate<Recorder: IdentityCheckRecorder>(
        _ token: String,
        now: Date,
        recording recorder: inout Recorder
    ) throws(TokenError) -> Evaluation {
        let jws: CompactJWS
        do {
            jws = try CompactJWS.parse(token, malformed: .invalidIdentityToken)
        } catch {
            try recorder.record(.structure, error) { error.message }
            return Evaluation()
        }
        try recorder.record(.structure, nil) {
            "Three canonical base64url segments and a strict JSON header; \(token.utf8.count) bytes."
        }
        let keyID = try checkHeaderAndMAC(jws, &recorder)
        let payload = StrictJSONReader.object(from: jws.payload)
        try recorder.record(
            .payloadJSON,
            payload == nil ? TokenError(.invalidIdentityToken, "The payload is not a strict JSON object.") : nil
        ) {
            payload.map { "A strict JSON object with \($0.members.count) members." }
                ?? "The payload is not a strict JSON object."
        }
        guard let payload else { return Evaluation(keyID: keyID) }
        let claims = try IdentityClaimsReader(configuration: configuration, now: now.timeIntervalSince1970).read(
            payload, recording: &recorder)
        return Evaluation(keyID: keyID, claims: claims)
    }

    /// The JWS layer alone: structure, header, MAC. Returns the payload bytes, not yet parsed.
    func verifiedPayload(_ token: String) throws(TokenError) -> [UInt8] {
        let jws = try CompactJWS.parse(token, malformed: .invalidIdentityToken)
        var recorder = FailFastRecorder()
        guard try checkHeaderAndMAC(jws, &recorder) != nil else {
            throw TokenError(.invalidSignature, "The signature does not verify.")
        }
        return jws.payload
    }

    /// The header checks and the MAC; returns the `kid` of the secret whose MAC matched.
    ///
    /// The order is the verifier's: `alg`, `typ`, the signature's length, the `kid`, the MAC. The MAC
    /// is computed only when `alg` is HS256, the length right and the `kid` known.
    private func checkHeaderAndMAC<Recorder: IdentityCheckRecorder>(
        _ jws: CompactJWS,
        _ recorder: inout Recorder
    ) throws(TokenError) -> String? {
        let algorithmFailure = failure { () throws(TokenError) in
            try jws.requireAlgorithm("HS256", malformed: .invalidIdentityToken)
        }
        let algorithmPassed = try recorder.record(.algorithm, algorithmFailure) {
            algorithmFailure?.message ?? "alg is HS256."
        }
        let typeFailure = failure { () throws(TokenError) in try Self.checkType(jws) }
        try recorder.record(.type, typeFailure) {
            if let typeFailure { return typeFailure.message }
            guard case .string(let typ)? = jws.type else { return "No typ." }
            return "typ is \(InspectionText.quoted(typ))."
        }
        let lengthFailure =
            jws.signature.count == SHA256.byteCount
            ? nil : TokenError(.invalidSignature, "An HS256 signature is 32 bytes.")
        if let lengthFailure {
            try recorder.record(.signature, lengthFailure) {
                "\(lengthFailure.message) This one is \(jws.signature.count) bytes."
            }
        }
        // The secret the kid selects; nil means every active secret is tried.
        var selected: Int?
        var keyFound = true
        if let kid = jws.keyID {
            // Both kids are validated ASCII, for which `==` compares bytes.
            selected = keys.firstIndex(where: { $0.kid == kid })
            keyFound = try recorder.record(
                .keyID,
                selected == nil
                    ? TokenError(.invalidSignature, "The kid names no active identity secret of this project.") : nil
            ) {
                selected == nil
                    ? "kid \(InspectionText.quoted(kid)) names none of this project's \(keys.count) active secrets."
                    : "kid \(InspectionText.quoted(kid)) names an active secret."
            }
        } else {
            try recorder.record(.keyID, nil) { "No kid: each of the \(keys.count) active secrets is tried." }
        }
        guard algorithmPassed, lengthFailure == nil, keyFound else { return nil }
        let matched = matchingKey(jws, selected: selected)
        try recorder.record(
            .signature, matched == nil ? TokenError(.invalidSignature, "The signature does not verify.") : nil
        ) {
            if let matched { return "The MAC matches the secret \(InspectionText.quoted(matched))." }
            if let selected { return "The MAC does not match the secret \(InspectionText.quoted(keys[selected].kid))." }
            return "The MAC matches none of the \(keys.count) active secrets."
        }
        return matched
    }

    /// Checks `typ`: when present, `JWT` or `application/jwt`, in any case.
    private static func checkType(_ jws: CompactJWS) throws(TokenError) {
        if let typ = try jws.type(malformed: .invalidIdentityToken) {
            guard
                typ.utf8.elementsEqual("JWT".utf8, by: Self.asciiCaseInsensitive)
                    || typ.utf8.elementsEqual("application/jwt".utf8, by: Self.asciiCaseInsensitive)
            else {
                throw TokenError(.invalidIdentityToken, "The typ header, when present, must be JWT.")
            }
        }
    }

    private static func asciiCaseInsensitive(_ a: UInt8, _ b: UInt8) -> Bool {
        func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        return lower(a) == lower(b)
    }

    private static func isValid(_ signature: [UInt8], _ input: UnsafeRawBufferPointer, _ keyed: HMAC<SHA256>) -> Bool {
        var hmac = keyed
        hmac.update(data: input)
        let code = hmac.finalize()
        return code.withUnsafeBytes { computed in
            var difference: UInt8 = 0
            for index in 0..<SHA256.byteCount { difference |= computed[index] ^ signature[index] }
            return difference == 0
        }
    }

    /// The `kid` of the secret whose MAC matches: the `selected` one only, or else the first of all.
    /// The signature is 32 bytes.
    private func matchingKey(_ jws: CompactJWS, selected: Int?) -> String? {
        if let selected {
            let entry = keys[selected]
            return jws.withSigningInput { input in Self.isValid(jws.signature, input, entry.keyed) } ? entry.kid : nil
        }
        return jws.withSigningInput { input in
            var matched: String?
            for entry in keys {
                // Every key is tried, so the time taken does not tell which one matched.
                let valid = Self.isValid(jws.signature, input, entry.keyed)
                if valid, matched == nil { matched = entry.kid }
            }
            return matched
        }
    }
}
