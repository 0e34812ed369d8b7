import Foundation
import TesseraAttest

/// The domain the HTTP layer calls: the store, the project cache, credentials, session issuing,
/// rate limits and metrics, built once per application and shared by reference.
final class TesseraCore: Sendable {
    let store: any TesseraStore
    let projects: ProjectCache
    let configuration: ServerConfiguration
    let metrics: ServerMetrics
    let credentials: CredentialResolver
    let sessions: SessionIssuer
    let rateLimiter: RateLimiter
    /// When identify next records an identity secret's `last_used_at`.
    let secretUsage = IdentitySecretUsage()
    /// The console's operator accounts and sessions.
    let operators: OperatorAccounts
    /// Sessions bound to device keys: proofs, nonces, single-use `jti`s.
    let dpop: DPoPGate
    /// The requests and deliveries in flight, and whether the node is draining.
    let activity: NodeActivity
    /// The checks of `GET /health/ready`.
    let readiness: Readiness
    /// App Attest: challenges, verification of starts and identifies, verdicts.
    let appAttest: AppAttestGate
    /// Who was active each day, and the day's tallies (identify outcomes, App Attest checks).
    let activeUsers: ActivityRecorder
    /// Each session's last client address and user agent, written when they change.
    let sessionClients: SessionClientRecorder

    /// - Parameters:
    ///   - activity: shared with the node's drain, which starts it on shutdown.
    ///   - masterKeyVerified: whether the store's master keys opened every sealed value at start
    ///     (``SecretResealer/sealPlaintextAndVerify(store:)``); readiness fails without it.
    init(
        store: any TesseraStore, configuration: ServerConfiguration, metrics: ServerMetrics,
        activity: NodeActivity = NodeActivity(), masterKeyVerified: Bool = false
    ) {
        let now = configuration.now
        let projects = ProjectCache(
            store: store, timeToLiveSeconds: configuration.projectCacheSeconds,
            // Another node may sign with a retired key until its cache reloads the project.
            retiredKeyWindow: configuration.sessionJWTLifetimeSeconds + configuration.sessionJWTLeewaySeconds
                + configuration.projectCacheSeconds,
            now: { CredentialResolver.seconds(now()) })
        self.store = store
        self.projects = projects
        self.configuration = configuration
        self.metrics = metrics
        self.credentials = CredentialResolver(
            store: store, projects: projects, metrics: metrics,
            jwtLeewaySeconds: configuration.sessionJWTLeewaySeconds, now: now)
        self.sessions = SessionIssuer(
            issuer: configuration.issuer, jwtLifetimeSeconds: configuration.sessionJWTLifetimeSeconds)
        self.rateLimiter = RateLimiter(store: store, configuration: configuration)
        self.operators = OperatorAccounts(store: store, now: now, bcryptCost: configuration.operatorPasswordCost)
        self.dpop = DPoPGate(
            store: store, baseURL: configuration.issuer, nonces: DPoPNonces(masterKeys: store.masterKeys))
        self.activity = activity
        self.readiness = Readiness(store: store, activity: activity, masterKeyVerified: masterKeyVerified)
        self.appAttest = AppAttestGate(
            store: store, metrics: metrics,
            trustAnchors: configuration.appAttestTrustAnchors ?? [AppAttestVerifier.appleRoot])
        let activeUsers = ActivityRecorder(store: store)
        self.activeUsers = activeUsers
        self.sessionClients = SessionClientRecorder(store: store)
        metrics.forwardTallies { name, projectID in
            activeUsers.tally(name, projectID: projectID, now: CredentialResolver.seconds(now()))
        }
    }

    /// The current time as a `Date` and as whole Unix seconds.
    func currentTime() -> (date: Date, seconds: Int64) {
        let date = configuration.now()
        return (date, CredentialResolver.seconds(date))
    }

    /// How long a retired signing key stays in the JWKS after its retirement: every JWT it signed,
    /// on any node (whose cached project may sign with it until it reloads), has expired by then.
    var retiredSigningKeyWindow: Int64 {
        configuration.sessionJWTLifetimeSeconds + configuration.sessionJWTLeewaySeconds
            + configuration.projectCacheSeconds
    }
}
