import Hummingbird
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

    enum CodingKeys: String, CodingKey, CaseIterable {
        case allowUnverifiedIdentify = "allow_unverified_identify"
        case requireAudience = "require_audience"
        case expectedIssuer = "expected_issuer"
        case maxIdentityTokenLifetimeSeconds = "max_identity_token_lifetime_seconds"
        case leewaySeconds = "leeway_seconds"
        case anonymousSessionMinutes = "anonymous_session_minutes"
        case identifiedSessionMinutes = "identified_session_minutes"
        case rateLimits = "rate_limits"
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
        return .json { writer in
            writer.objectStart()
            writer.key("profile")
            writer.profile(profile, admin: true)
            writer.objectEnd()
        }
    }

    /// `GET /v1/admin/profiles/{profile_id}/sessions`
    func listSessions(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (_, profile) = try await namedProfile(context)
        let sessions = try await core.store.liveSessions(profileID: profile.id, now: core.currentTime().seconds)
        return .json { $0.sessions(sessions) }
    }

    /// `POST /v1/admin/profiles/{profile_id}/sessions/revoke`
    func revokeSessions(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let (runtime, profile) = try await namedProfile(context)
        _ = try await core.store.revokeSessions(
            projectID: runtime.id, profileID: profile.id, now: core.currentTime().seconds,
            origin: addresses.secretKeyOrigin(request, context: context))
        return .noContent
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

    /// `DELETE /v1/admin/profiles/{profile_id}`
    func eraseProfile(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let profileID = try context.parameters.require("profile_id")
        let runtime = try context.project()
        guard
            try await core.store.eraseProfile(
                projectID: runtime.id, profileID: profileID, now: core.currentTime().seconds,
                origin: addresses.secretKeyOrigin(request, context: context))
        else {
            throw CoreError.notFound
        }
        return .noContent
    }

    /// `GET /v1/admin/project`
    func getProject(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let secrets = try await core.store.identitySecrets(projectID: runtime.id)
        return .json { $0.project(runtime.project, secrets: secrets) }
    }

    /// `PATCH /v1/admin/project`
    func updateProject(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let patch = try await bodies.decode(SettingsPatch.self, from: request)
        var settings = runtime.settings
        if let value = patch.allowUnverifiedIdentify { settings.allowUnverifiedIdentify = value }
        if let value = patch.requireAudience { settings.requireAudience = value }
        if let value = patch.expectedIssuer {
            if let issuer = value, !InputRules.isIssuer(issuer) {
                throw CoreError.invalidRequest(
                    "expected_issuer must be 1 to 2048 bytes without control characters, or null.")
            }
            settings.expectedIssuer = value
        }
        if let value = patch.maxIdentityTokenLifetimeSeconds {
            guard ProjectSettings.identityTokenLifetimeRange.contains(value) else {
                throw CoreError.invalidRequest("max_identity_token_lifetime_seconds must be between 1 and 86400.")
            }
            settings.maxIdentityTokenLifetimeSeconds = value
        }
        if let value = patch.leewaySeconds {
            guard ProjectSettings.leewayRange.contains(value) else {
                throw CoreError.invalidRequest("leeway_seconds must be between 0 and 600.")
            }
            settings.leewaySeconds = value
        }
        for (value, name) in [
            (patch.anonymousSessionMinutes, "anonymous_session_minutes"),
            (patch.identifiedSessionMinutes, "identified_session_minutes"),
        ] {
            if let value, !ProjectSettings.sessionMinutesRange.contains(value) {
                throw CoreError.invalidRequest("\(name) must be between 5 and 525600.")
            }
        }
        if let value = patch.anonymousSessionMinutes { settings.anonymousSessionMinutes = value }
        if let value = patch.identifiedSessionMinutes { settings.identifiedSessionMinutes = value }
        for change in patch.rateLimits?.changes ?? [] { _ = settings.rateLimits.set(change.name, to: change.value) }
        guard
            let project = try await core.store.updateProjectSettings(
                projectID: runtime.id, settings: settings, now: core.currentTime().seconds,
                origin: addresses.secretKeyOrigin(request, context: context))
        else { throw CoreError.notFound }
        core.projects.invalidate(projectID: runtime.id)
        let secrets = try await core.store.identitySecrets(projectID: runtime.id)
        return .json { $0.project(project, secrets: secrets) }
    }

    /// `POST /v1/admin/identity-secrets`
    func createIdentitySecret(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let secret = IdentitySecret.generate()
        let record = IdentitySecretRecord(kid: secret.kid, value: secret.value, createdAt: core.currentTime().seconds)
        try await core.store.addIdentitySecret(
            projectID: runtime.id, secret: record, limit: 3,
            origin: addresses.secretKeyOrigin(request, context: context))
        core.projects.invalidate(projectID: runtime.id)
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
        let kid = try context.parameters.require("kid")
        let runtime = try context.project()
        guard
            try await core.store.deleteIdentitySecret(
                projectID: runtime.id, kid: kid, now: core.currentTime().seconds,
                origin: addresses.secretKeyOrigin(request, context: context))
        else {
            throw CoreError.notFound
        }
        core.projects.invalidate(projectID: runtime.id)
        return .noContent
    }
}
