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

    var id: String { project.id }
    var settings: ProjectSettings { project.settings }
}
