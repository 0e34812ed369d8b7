import TesseraTokens

/// A project with what requests need from it ready to use: its identity-token verifier, its
/// session key ring and its JWKS document.
///
/// Immutable and shared by reference: the cache hands the same instance to every request of the
/// project, and a request's context holds one reference instead of a copy of every field.
final class ProjectRuntime: Sendable {
    let project: ProjectRecord
    /// Nil only when the project has no identity secret.
    let verifier: IdentityTokenVerifier?
    let keyRing: SessionKeyRing
    let jwksJSON: [UInt8]
    let loadedAt: ContinuousClock.Instant
    /// The API keys the project accepts: current ones, and rotated-out ones until their grace ends.
    let apiKeys: [APIKeyHashRecord]

    init(
        project: ProjectRecord, verifier: IdentityTokenVerifier?, keyRing: SessionKeyRing, jwksJSON: [UInt8],
        loadedAt: ContinuousClock.Instant, apiKeys: [APIKeyHashRecord]
    ) {
        self.project = project
        self.verifier = verifier
        self.keyRing = keyRing
        self.jwksJSON = jwksJSON
        self.loadedAt = loadedAt
        self.apiKeys = apiKeys
    }

    var id: String { project.id }
    var settings: ProjectSettings { project.settings }

    /// Whether the key hashing to `hash` is an accepted key of `kind` at `now`.
    func accepts(_ kind: APIKeyKind, hash: [UInt8], now: Int64) -> Bool {
        apiKeys.contains { key in
            key.kind == kind && key.hash == hash && (key.expiresAt.map { $0 > now } ?? true)
        }
    }
}
