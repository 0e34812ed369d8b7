import TesseraTokens

/// A project with what requests need from it ready to use: its identity-token verifier, its
/// session key ring and its JWKS document.
struct ProjectRuntime: Sendable {
    let project: ProjectRecord
    /// Nil only when the project has no identity secret.
    let verifier: IdentityTokenVerifier?
    let keyRing: SessionKeyRing
    let jwksJSON: [UInt8]
    let loadedAt: ContinuousClock.Instant
    /// The API keys the project accepts: current ones, and rotated-out ones until their grace ends.
    var apiKeys: [APIKeyHashRecord] = []

    var id: String { project.id }
    var settings: ProjectSettings { project.settings }

    /// Whether the key hashing to `hash` is an accepted key of `kind` at `now`.
    func accepts(_ kind: APIKeyKind, hash: [UInt8], now: Int64) -> Bool {
        apiKeys.contains { key in
            key.kind == kind && key.hash == hash && (key.expiresAt.map { $0 > now } ?? true)
        }
    }
}
