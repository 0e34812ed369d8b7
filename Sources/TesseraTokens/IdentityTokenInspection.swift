/// The result of inspecting an identity token: each check of the verifier with its verdict.
///
/// `IdentityTokenVerifier.verify(_:now:)` stops at the first problem; an inspection
/// goes on wherever the later checks still make sense, so an operator sees every problem of a
/// token at once. It is computed by the very code `verify` runs, so ``error`` is always exactly the
/// error `verify` throws for the same token and time, and ``claims`` exactly what it returns.
///
/// Nothing in an inspection contains the verifier's secrets or the token's signature. The
/// ``header`` and ``payload`` are the token's own, unverified: show them, never trust them.
///
/// ```swift
/// let inspection = verifier.inspect(pastedToken, now: Date())
/// for check in inspection.checks {
///     print(check.name, check.verdict, check.detail)
/// }
/// print(inspection.error?.code ?? "ok")
/// ```
public struct IdentityTokenInspection: Sendable {
    /// The outcome of one check.
    public enum Verdict: String, Sendable {
        /// The check ran and the token satisfies it.
        case passed
        /// The check ran and the token breaks it.
        case failed
        /// The check could not run: an earlier failure left it without its input.
        case notChecked
    }

    /// One check of the verifier.
    public struct Check: Sendable, Hashable {
        /// The check's name: `structure`, `algorithm`, `typ`, `key id`, `signature`, `payload JSON`,
        /// then one per claim rule (`exp type`, …, `exp`, `lifetime`, …, `email`).
        public var name: String
        /// Whether the token passed it.
        public var verdict: Verdict
        /// A short sentence for people, such as `exp is 2026-11-26T02:30:00Z, 4 minutes ago; leeway 60 s.`
        public var detail: String

        /// Creates a check.
        /// - Parameters:
        ///   - name: the check's name.
        ///   - verdict: its outcome.
        ///   - detail: a short sentence for people.
        public init(name: String, verdict: Verdict, detail: String) {
            self.name = name
            self.verdict = verdict
            self.detail = detail
        }
    }

    /// Every check, in the verifier's order: structure, algorithm, typ, key id, signature, payload
    /// JSON, then every claim rule. The verifier looks at the signature's length before the `kid`,
    /// so the first failed check is not always the one ``error`` names; ``error`` is authoritative.
    public var checks: [Check]
    /// The decoded header (unverified), when its segment is base64url of UTF-8 text.
    public var header: String?
    /// The decoded payload (unverified), when its segment is base64url of UTF-8 text.
    public var payload: String?
    /// The `kid` of the secret whose MAC matches the token's, when one does.
    public var keyID: String?
    /// The verified claims, when every check passed.
    public var claims: IdentityClaims?
    /// Exactly what `verify` throws for this token and time; `nil` when it accepts the token.
    public var error: TokenError?
}
