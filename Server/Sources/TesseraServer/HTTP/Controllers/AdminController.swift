import Hummingbird
import TesseraAttest
import TesseraTokens

/// The body of `PATCH /v1/admin/project`: every member optional, unknown members rejected.
private struct SettingsPatch: RequestBody {
    /// Unknown members are refused: every string is judged.
    static let readMembers: Set<String>? = nil

    var allowUnverifiedIdentify: Bool?
    var requireAudience: Bool?
    var expectedIssuer: String??
    var maxIdentityTokenLifetimeSeconds: Int64?
    var leewaySeconds: Int64?
    var anonymousSessionMinutes: Int64?
    var identifiedSessionMinutes: Int64?
    var rateLimits: RateLimitsPatch?
    var sessionBinding: ProjectSettings.SessionBinding?
    var dpopNonceRequired: Bool?
    /// `.some(nil)`: `null`, unlimited.
    var maxSessionsPerProfile: Int64??
    var appAttest: AppAttestPatch?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case allowUnverifiedIdentify = "allow_unverified_identify"
        case requireAudience = "require_audience"
        case expectedIssuer = "expected_issuer"
        case maxIdentityTokenLifetimeSeconds = "max_identity_token_lifetime_seconds"
        case leewaySeconds = "leeway_seconds"
        case anonymousSessionMinutes = "anonymous_session_minutes"
        case identifiedSessionMinutes = "identified_session_minutes"
        case rateLimits = "rate_limits"
        case sessionBinding = "session_binding"
        case dpopNonceRequired = "dpop_nonce_required"
        case maxSessionsPerProfile = "max_sessions_per_profile"
        case appAttest = "app_attest"
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        if let unknown = all.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw CoreError.invalidRequest("\(unknown.stringValue) is not a project setting.")
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        allowUnverifiedIdentify = try container.decodeIfPresent(Bool.self, forKey: .allowUnverifiedIdentify)
        requireAudience = try container.decodeIfPresent(Bool.self, forKey: .requireAudience)
        if container.contains(.expectedIssuer) {
            expectedIssuer = .some(
                try container.decodeNil(forKey: .expectedIssuer)
                    ? nil : try container.decode(String.self, forKey: .expectedIssuer))
        }
        maxIdentityTokenLifetimeSeconds = try container.decodeIfPresent(
            Int64.self, forKey: .maxIdentityTokenLifetimeSeconds)
        leewaySeconds = try container.decodeIfPresent(Int64.self, forKey: .leewaySeconds)
        anonymousSessionMinutes = try container.decodeIfPresent(Int64.self, forKey: .anonymousSessionMinutes)
        identifiedSessionMinutes = try container.decodeIfPresent(Int64.self, forKey: .identifiedSessionMinutes)
        rateLimits = try container.decodeIfPresent(RateLimitsPatch.self, forKey: .rateLimits)
        if let binding = try container.decodeIfPresent(String.self, forKey: .sessionBinding) {
            guard let value = ProjectSettings.SessionBinding(rawValue: binding) else {
                throw CoreError.invalidRequest("session_binding must be off, optional or required.")
            }
            sessionBinding = value
        }
        dpopNonceRequired = try container.decodeIfPresent(Bool.self, forKey: .dpopNonceRequired)
        if container.contains(.maxSessionsPerProfile) {
            maxSessionsPerProfile = .some(
                try container.decodeNil(forKey: .maxSessionsPerProfile)
                    ? nil : try container.decode(Int64.self, forKey: .maxSessionsPerProfile))
        }
        appAttest = try container.decodeIfPresent(AppAttestPatch.self, forKey: .appAttest)
    }

    /// `base` with the members this patch gives, and only those, changed.
    func apply(to base: ProjectSettings) -> ProjectSettings {
        var settings = base
        if let value = allowUnverifiedIdentify { settings.allowUnverifiedIdentify = value }
        if let value = requireAudience { settings.requireAudience = value }
        if let value = expectedIssuer { settings.expectedIssuer = value }
        if let value = maxIdentityTokenLifetimeSeconds { settings.maxIdentityTokenLifetimeSeconds = value }
        if let value = leewaySeconds { settings.leewaySeconds = value }
        if let value = anonymousSessionMinutes { settings.anonymousSessionMinutes = value }
        if let value = identifiedSessionMinutes { settings.identifiedSessionMinutes = value }
        for change in rateLimits?.changes ?? [] { _ = settings.rateLimits.set(change.name, to: change.value) }
        if let value = sessionBinding { settings.sessionBinding = value }
        if let value = dpopNonceRequired { settings.dpopNonceRequired = value }
        if let value = maxSessionsPerProfile { settings.maxSessionsPerProfile = value }
        appAttest?.apply(to: &settings.appAttest)
        return settings
    }
}

/// The `app_attest` member of `PATCH /v1/admin/project`: each member present is set, the others
/// are kept; unknown members and values are rejected.
private struct AppAttestPatch: Decodable {
    var mode: AppAttestSettings.Mode?
    var appIDs: [String]?
    var environment: AppAttestEnvironment?
    var allowUnsupported: Bool?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case mode
        case appIDs = "app_ids"
        case environment
        case allowUnsupported = "allow_unsupported"
    }

    init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: SettingsPatch.AnyKey.self)
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        if let unknown = all.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw CoreError.invalidRequest("app_attest.\(unknown.stringValue) is not an app_attest setting.")
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // A member left out keeps its value; one sent as null has none to set (the contract types
        // each as non-null), so it is refused rather than read as "unchanged".
        for key in CodingKeys.allCases where container.contains(key) {
            if try container.decodeNil(forKey: key) {
                throw CoreError.invalidRequest("app_attest.\(key.rawValue) must not be null: leave it out to keep it.")
            }
        }
        if let mode = try container.decodeIfPresent(String.self, forKey: .mode) {
            guard let value = AppAttestSettings.Mode(rawValue: mode) else {
                throw CoreError.invalidRequest("app_attest.mode must be off, monitor, enforce_new or enforce.")
            }
            self.mode = value
        }
        appIDs = try container.decodeIfPresent([String].self, forKey: .appIDs)
        if let environment = try container.decodeIfPresent(String.self, forKey: .environment) {
            guard let value = AppAttestEnvironment(rawValue: environment) else {
                throw CoreError.invalidRequest("app_attest.environment must be development or production.")
            }
            self.environment = value
        }
        allowUnsupported = try container.decodeIfPresent(Bool.self, forKey: .allowUnsupported)
    }

    func apply(to settings: inout AppAttestSettings) {
        if let mode { settings.mode = mode }
        if let appIDs { settings.appIDs = appIDs }
        if let environment { settings.environment = environment }
        if let allowUnsupported { settings.allowUnsupported = allowUnsupported }
    }
}

/// The `rate_limits` member of `PATCH /v1/admin/project`: each limit present is set (`null` is
/// unlimited), the others are kept; unknown members and limits out of range are rejected.
private struct RateLimitsPatch: Decodable {
    var changes: [(name: String, value: Int64?)] = []

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: SettingsPatch.AnyKey.self)
        var probe = RateLimits()
        for key in container.allKeys {
            let value = try container.decodeNil(forKey: key) ? nil : try container.decode(Int64.self, forKey: key)
            guard probe.set(key.stringValue, to: value) else {
                throw CoreError.invalidRequest("rate_limits.\(key.stringValue) is not a rate limit.")
            }
            if let value, !RateLimits.range.contains(value) {
                throw CoreError.invalidRequest(
                    "rate_limits.\(key.stringValue) must be between 1 and \(RateLimits.range.upperBound), or null (unlimited)."
                )
            }
            changes.append((key.stringValue, value))
        }
    }
}

/// `/v1/admin`: the secret-key API of a project — profiles, sessions, devices, settings, identity
/// secrets, signing keys and API keys.
struct AdminController: Sendable {
    let core: TesseraCore
    let bodies: BodyReader
    let addresses: ClientAddressReader

    /// The project of the secret key and its profile named in the path; 404 for another's or none.
    private func namedProfile(_ context: TesseraRequestContext) async throws -> (ProjectRuntime, ProfileRecord) {
        let profileID = try context.parameters.require("profile_id")
        let runtime = try context.project()
        guard let profile = try await core.store.profile(projectID: runtime.id, id: profileID) else {
            throw CoreError.notFound
        }
        return (runtime, profile)
    }

    /// `GET /v1/admin/profiles/{profile_id}`
    func getProfile(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (_, profile) = try await namedProfile(context)
        return try await profileResponse(profile)
    }

    /// `GET /v1/admin/profiles/{profile_id}/sessions`
    func listSessions(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (_, profile) = try await namedProfile(context)
        let sessions = try await core.store.liveSessions(profileID: profile.id, now: core.currentTime().seconds)
        return .json { $0.sessions(sessions) }
    }

    /// `POST /v1/admin/profiles/{profile_id}/sessions/revoke`
    func revokeSessions(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        try await noContent("profile_id", request, context) { try await $0.endSessions($1, profileID: $2, origin: $3) }
    }

    /// `GET /v1/admin/profiles/{profile_id}/devices`
    func listDevices(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (_, profile) = try await namedProfile(context)
        let devices = try await core.store.liveDevices(profileID: profile.id, now: core.currentTime().seconds)
        return .json { writer in
            writer.objectStart()
            writer.array("devices", devices) { $0.device($1, includeToken: true) }
            writer.objectEnd()
        }
    }

    /// Runs `action` on the path's `parameter` in the key's project, as the secret key from this
    /// request's address, and answers `204`.
    func noContent(
        _ parameter: String, _ request: Request, _ context: TesseraRequestContext,
        _ action: (AdminActions, ProjectRuntime, String, EventOrigin) async throws -> Void
    ) async throws -> Response {
        let value = try context.parameters.require(parameter)
        try await action(
            AdminActions(core: core), try context.project(), value, addresses.secretKeyOrigin(request, context: context)
        )
        return .noContent
    }

    /// `DELETE /v1/admin/profiles/{profile_id}`
    func eraseProfile(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        try await noContent("profile_id", request, context) { try await $0.erase($1, profileID: $2, origin: $3) }
    }

    /// `GET /v1/admin/project`
    func getProject(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let secrets = try await core.store.identitySecrets(projectID: runtime.id)
        let counts = try await core.store.appAttestCounts(projectID: runtime.id)
        return .json { $0.project(runtime.project, secrets: secrets, appAttestCounts: counts) }
    }

    /// `PATCH /v1/admin/project`
    func updateProject(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let patch = try await bodies.decode(SettingsPatch.self, from: request)
        // Applied to the project's row as locked in the store's transaction, not to the cached copy:
        // only the members given change.
        let project = try await AdminActions(core: core).updateSettings(
            runtime, origin: addresses.secretKeyOrigin(request, context: context)
        ) { locked in patch.apply(to: locked.settings) }
        let secrets = try await core.store.identitySecrets(projectID: runtime.id)
        let counts = try await core.store.appAttestCounts(projectID: runtime.id)
        return .json { $0.project(project, secrets: secrets, appAttestCounts: counts) }
    }

    /// `POST /v1/admin/identity-secrets`
    func createIdentitySecret(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let record = try await AdminActions(core: core).createIdentitySecret(
            try context.project(), origin: addresses.secretKeyOrigin(request, context: context))
        return .json(.created) { writer in
            writer.objectStart()
            writer.key("identity_secret")
            writer.objectStart()
            writer.field("kid", record.kid)
            writer.field("secret", record.value)
            writer.time("created_at", record.createdAt)
            writer.objectEnd()
            writer.objectEnd()
        }
    }

    /// `DELETE /v1/admin/identity-secrets/{kid}`
    func deleteIdentitySecret(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        try await noContent("kid", request, context) { try await $0.deleteIdentitySecret($1, kid: $2, origin: $3) }
    }
}
