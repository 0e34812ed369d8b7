/// What the server keeps of one installation's App Attest: the verdict of its latest start or
/// identify and, once it attested, its key.
public struct AppAttestRecord: Sendable, Hashable {
    public var projectID: String
    public var installationID: String
    /// As operators read it: `attested`, `unattested`, `failed: reason` or `unsupported`.
    public var verdict: String
    /// Whether `enforce` would have refused that start or identify (what `monitor` reports).
    public var enforceWouldRefuse: Bool
    /// The attested key, nil until the installation attests.
    public var key: AppAttestKeyRecord?
    public var updatedAt: Int64

    public init(
        projectID: String, installationID: String, verdict: String, enforceWouldRefuse: Bool,
        key: AppAttestKeyRecord?, updatedAt: Int64
    ) {
        self.projectID = projectID
        self.installationID = installationID
        self.verdict = verdict
        self.enforceWouldRefuse = enforceWouldRefuse
        self.key = key
        self.updatedAt = updatedAt
    }
}

/// An installation's attested key: what its assertions are verified with.
public struct AppAttestKeyRecord: Sendable, Hashable {
    /// SHA-256 of ``publicKey`` (32 bytes).
    public var keyID: [UInt8]
    /// An uncompressed P-256 point (65 bytes).
    public var publicKey: [UInt8]
    /// The counter of the last accepted attestation or assertion; the next must exceed it.
    public var counter: Int64
    /// `development` or `production`.
    public var environment: String
    /// The app ID (`TEAMID.bundle.id`) the key was attested for.
    public var appID: String
    /// Apple's receipt (kept for fraud-risk queries).
    public var receipt: [UInt8]
    public var attestedAt: Int64

    public init(
        keyID: [UInt8], publicKey: [UInt8], counter: Int64, environment: String, appID: String, receipt: [UInt8],
        attestedAt: Int64
    ) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.counter = counter
        self.environment = environment
        self.appID = appID
        self.receipt = receipt
        self.attestedAt = attestedAt
    }
}

/// An installation's App Attest state before a start: whether it exists, and what was recorded of it.
public struct AppAttestState: Sendable, Hashable {
    /// Whether the installation exists (a start of it is a restore).
    public var installationExists: Bool
    public var record: AppAttestRecord?

    public init(installationExists: Bool, record: AppAttestRecord?) {
        self.installationExists = installationExists
        self.record = record
    }
}

/// The verdict to record for an installation after its start or identify succeeded.
public struct AppAttestVerdictWrite: Sendable, Hashable {
    public var projectID: String
    public var installationID: String
    public var verdict: String
    public var enforceWouldRefuse: Bool
    /// Replaces the stored key (a new attestation, or nil for an installation created without one);
    /// nil with ``replacesKey`` false keeps the stored key.
    public var key: AppAttestKeyRecord?
    public var replacesKey: Bool
    public var now: Int64

    public init(
        projectID: String, installationID: String, verdict: String, enforceWouldRefuse: Bool,
        key: AppAttestKeyRecord? = nil, replacesKey: Bool = false, now: Int64
    ) {
        self.projectID = projectID
        self.installationID = installationID
        self.verdict = verdict
        self.enforceWouldRefuse = enforceWouldRefuse
        self.key = key
        self.replacesKey = replacesKey || key != nil
        self.now = now
    }
}

/// The project's installations by App Attest verdict (the admin project answer).
public struct AppAttestCounts: Sendable, Hashable {
    /// Installations by verdict label: `attested`, `unattested`, `failed`, `unsupported`.
    public var verdicts: [String: Int] = [:]
    /// Installations whose latest start or identify `enforce` would have refused.
    public var enforceWouldRefuse = 0

    public init() {}
}
