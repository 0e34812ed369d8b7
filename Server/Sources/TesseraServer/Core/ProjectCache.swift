import Synchronization
import TesseraTokens

/// Projects, their secrets and keys, cached for a few seconds so the hot paths read no project rows.
///
/// Local changes invalidate at once; the time-to-live bounds staleness when several nodes share a
/// database.
final class ProjectCache: Sendable {
    private struct State {
        var byID: [String: ProjectRuntime] = [:]
        var idByKeyHash: [[UInt8]: String] = [:]
        /// Counts invalidations: a load that overlapped one may have read the rows from before the
        /// change it announced, so it does not cache them.
        var invalidations: UInt64 = 0
    }

    private let store: any TesseraStore
    private let timeToLive: Duration
    private let retiredKeyWindow: Int64
    private let now: @Sendable () -> Int64
    private let state = Mutex(State())

    init(
        store: any TesseraStore, timeToLiveSeconds: Int64, retiredKeyWindow: Int64, now: @escaping @Sendable () -> Int64
    ) {
        self.store = store
        self.timeToLive = .seconds(timeToLiveSeconds)
        self.retiredKeyWindow = retiredKeyWindow
        self.now = now
    }

    /// The project with this ID, or nil.
    func runtime(projectID: String) async throws -> ProjectRuntime? {
        if let cached = fresh(projectID) { return cached }
        let started = invalidations()
        guard let project = try await store.project(id: projectID) else { return nil }
        return try await load(project, started: started)
    }

    /// The project whose publishable key is `key` (or a rotated-out one in its grace period), or nil.
    func runtime(publishableKey key: String) async throws -> ProjectRuntime? {
        try await runtime(apiKey: key, kind: .publishable)
    }

    /// The project whose secret key is `key` (or a rotated-out one in its grace period), or nil.
    func runtime(secretKey key: String) async throws -> ProjectRuntime? {
        try await runtime(apiKey: key, kind: .secret)
    }

    /// A cached project answers only for a key it still accepts at this moment (a grace period ends
    /// on time); a key it does not accept is looked up again, so a rotation made by another node is
    /// seen within the time-to-live.
    private func runtime(apiKey key: String, kind: APIKeyKind) async throws -> ProjectRuntime? {
        let hash = OpaqueToken.sha256(key)
        let now = self.now()
        if let id = state.withLock({ $0.idByKeyHash[hash] }), let cached = fresh(id) {
            if cached.accepts(kind, hash: hash, now: now) { return cached }
        }
        let started = invalidations()
        var found =
            kind == .publishable
            ? try await store.project(publishableKeyHash: hash) : try await store.project(secretKeyHash: hash)
        if found == nil { found = try await store.project(retiredAPIKeyHash: hash, kind: kind, now: now) }
        guard let project = found else { return nil }
        state.withLock { $0.idByKeyHash[hash] = project.id }
        let runtime = try await load(project, started: started)
        return runtime.accepts(kind, hash: hash, now: now) ? runtime : nil
    }

    /// Forgets a project, so the next request reads it again.
    func invalidate(projectID: String) {
        state.withLock {
            _ = $0.byID.removeValue(forKey: projectID)
            $0.invalidations &+= 1
        }
    }

    private func invalidations() -> UInt64 { state.withLock { $0.invalidations } }

    /// The project with this ID if it is cached and fresh, read without suspending; nil otherwise
    /// (then ``runtime(projectID:)`` reads it).
    func cachedRuntime(projectID: String) -> ProjectRuntime? {
        fresh(projectID)
    }

    private func fresh(_ projectID: String) -> ProjectRuntime? {
        guard let runtime = state.withLock({ $0.byID[projectID] }) else { return nil }
        return runtime.loadedAt.duration(to: .now) < timeToLive ? runtime : nil
    }

    /// Reads the project's secrets and keys; caches the result unless an invalidation came after
    /// `started` (the count when the caller began reading), which would make it stale at once.
    private func load(_ project: ProjectRecord, started: UInt64) async throws -> ProjectRuntime {
        let secrets = try await store.identitySecrets(projectID: project.id)
        var keys = try await store.sessionKeys(projectID: project.id)
        if !keys.contains(where: { $0.retiredAt == nil }) {
            let key = SessionSigningKey.generate()
            let record = SessionKeyRecord(kid: key.kid, privateKey: key.privateKeyRawRepresentation, createdAt: now())
            try await store.rotateSessionKey(projectID: project.id, newKey: record, now: now(), origin: .system)
            keys = try await store.sessionKeys(projectID: project.id)
        }
        let apiKeys = try await store.apiKeyHashes(projectID: project.id, now: now())
        let runtime = try Self.makeRuntime(
            project: project, secrets: secrets, keys: keys, apiKeys: apiKeys, now: now(),
            retiredKeyWindow: retiredKeyWindow)
        state.withLock {
            if $0.invalidations == started { $0.byID[project.id] = runtime }
        }
        return runtime
    }

    static func makeRuntime(
        project: ProjectRecord, secrets: [IdentitySecretRecord], keys: [SessionKeyRecord],
        apiKeys: [APIKeyHashRecord], now: Int64, retiredKeyWindow: Int64
    ) throws -> ProjectRuntime {
        let settings = project.settings
        let identitySecrets = try secrets.map { try IdentitySecret(kid: $0.kid, value: $0.value) }
        let verifier: IdentityTokenVerifier? =
            identitySecrets.isEmpty
            ? nil
            : try IdentityTokenVerifier(
                secrets: Array(identitySecrets.suffix(3)),
                configuration: .init(
                    projectID: project.id, projectSlug: project.slug, requireAudience: settings.requireAudience,
                    expectedIssuer: settings.expectedIssuer, leeway: Double(settings.leewaySeconds),
                    maximumLifetime: Double(settings.maxIdentityTokenLifetimeSeconds)))
        guard let current = keys.last(where: { $0.retiredAt == nil }) else {
            throw ConfigurationError("project \(project.id) has no session signing key")
        }
        let signingKey = try SessionSigningKey(kid: current.kid, privateKeyRawRepresentation: current.privateKey)
        let retired = try keys.filter { key in
            guard let retiredAt = key.retiredAt else { return false }
            return retiredAt + retiredKeyWindow > now
        }.map { try SessionSigningKey(kid: $0.kid, privateKeyRawRepresentation: $0.privateKey).publicJWK }
        let keyRing = try SessionKeyRing(signingKey: signingKey, retiredKeys: retired)
        return ProjectRuntime(
            project: project, verifier: verifier, keyRing: keyRing, jwksJSON: keyRing.jwks.jsonData(), loadedAt: .now,
            apiKeys: apiKeys)
    }
}
