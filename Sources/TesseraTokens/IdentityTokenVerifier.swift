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
        let (payloadBytes, keyID) = try verifiedPayloadAndKey(token)
        guard let payload = StrictJSONReader.object(from: payloadBytes) else {
            throw TokenError(.invalidIdentityToken, "The payload is not a strict JSON object.")
        }
        let claims = try IdentityClaimsReader(configuration: configuration, now: now.timeIntervalSince1970).read(
            payload)
        return (claims, keyID)
    }

    /// The JWS layer alone: structure, header, MAC. Returns the payload bytes, not yet parsed.
    func verifiedPayload(_ token: String) throws(TokenError) -> [UInt8] {
        try verifiedPayloadAndKey(token).payload
    }

    /// The JWS layer alone, with the `kid` of the secret whose MAC matched.
    private func verifiedPayloadAndKey(_ token: String) throws(TokenError) -> (payload: [UInt8], keyID: String) {
        let jws = try CompactJWS.parse(token, malformed: .invalidIdentityToken)
        do {
            try jws.requireAlgorithm("HS256", malformed: .invalidIdentityToken)
            if let typ = try jws.type(malformed: .invalidIdentityToken) {
                guard
                    typ.utf8.elementsEqual("JWT".utf8, by: Self.asciiCaseInsensitive)
                        || typ.utf8.elementsEqual("application/jwt".utf8, by: Self.asciiCaseInsensitive)
                else {
                    throw TokenError(.invalidIdentityToken, "The typ header, when present, must be JWT.")
                }
            }
        }
        let keyID = try checkMAC(jws)
        return (jws.payload, keyID)
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

    /// Checks the MAC and returns the `kid` of the secret that matched.
    private func checkMAC(_ jws: CompactJWS) throws(TokenError) -> String {
        guard jws.signature.count == SHA256.byteCount else {
            throw TokenError(.invalidSignature, "An HS256 signature is 32 bytes.")
        }
        let matched: String?
        if let kid = jws.keyID {
            // Both kids are validated ASCII, for which `==` compares bytes.
            guard let entry = keys.first(where: { $0.kid == kid }) else {
                throw TokenError(.invalidSignature, "The kid names no active identity secret of this project.")
            }
            matched = jws.withSigningInput { input in Self.isValid(jws.signature, input, entry.keyed) } ? kid : nil
        } else {
            matched = jws.withSigningInput { input in
                var matched: String?
                for entry in keys {
                    // Every key is tried, so the time taken does not tell which one matched.
                    let valid = Self.isValid(jws.signature, input, entry.keyed)
                    if valid, matched == nil { matched = entry.kid }
                }
                return matched
            }
        }
        guard let matched else { throw TokenError(.invalidSignature, "The signature does not verify.") }
        return matched
    }
}
