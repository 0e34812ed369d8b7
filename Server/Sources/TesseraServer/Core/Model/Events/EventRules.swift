import Foundation

/// The decisions about events that both backends share: what changed, and what erasure scrubs.
enum EventRules {
    /// The names of the profile fields that identify's claims change (`profile.updated`'s `changed`).
    static func changedProfileFields(_ profile: ProfileRecord, name: String?, avatarURL: String?, email: String?)
        -> [String]
    {
        var changed: [String] = []
        if let name, name != profile.name { changed.append("name") }
        if let avatarURL, avatarURL != profile.avatarURL { changed.append("avatar_url") }
        if let email, email != profile.email { changed.append("email") }
        return changed
    }

    /// The names of the settings that differ (`project.updated`'s `changed`).
    static func changedSettings(_ old: ProjectSettings, _ new: ProjectSettings) -> [String] {
        var changed: [String] = []
        if old.allowUnverifiedIdentify != new.allowUnverifiedIdentify { changed.append("allow_unverified_identify") }
        if old.requireAudience != new.requireAudience { changed.append("require_audience") }
        if old.expectedIssuer != new.expectedIssuer { changed.append("expected_issuer") }
        if old.maxIdentityTokenLifetimeSeconds != new.maxIdentityTokenLifetimeSeconds {
            changed.append("max_identity_token_lifetime_seconds")
        }
        if old.leewaySeconds != new.leewaySeconds { changed.append("leeway_seconds") }
        if old.anonymousSessionMinutes != new.anonymousSessionMinutes { changed.append("anonymous_session_minutes") }
        if old.identifiedSessionMinutes != new.identifiedSessionMinutes {
            changed.append("identified_session_minutes")
        }
        if old.rateLimits != new.rateLimits { changed.append("rate_limits") }
        if old.sessionBinding != new.sessionBinding { changed.append("session_binding") }
        if old.dpopNonceRequired != new.dpopNonceRequired { changed.append("dpop_nonce_required") }
        if old.maxSessionsPerProfile != new.maxSessionsPerProfile { changed.append("max_sessions_per_profile") }
        if old.appAttest != new.appAttest { changed.append("app_attest") }
        return changed
    }

    /// The members erasure removes from the events of an erased profile: its personal data, and what
    /// ties it to a device (`profile.new_key`'s device-key thumbprint and installation ID).
    static let personalMembers = ["name", "email", "avatar_url", "external_id", "jkt", "installation_id"]

    /// `data` without the erased profile's personal data (each such member set to null), or nil when
    /// it holds none.
    static func scrubbed(_ data: String) -> String? {
        guard personalMembers.contains(where: { data.contains("\"\($0)\"") }),
            var object = (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any]
        else { return nil }
        var changed = false
        for member in personalMembers where object[member] != nil && !(object[member] is NSNull) {
            object[member] = NSNull()
            changed = true
        }
        guard changed,
            let encoded = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        else { return nil }
        return String(decoding: encoded, as: UTF8.self)
    }
}

/// The events one transaction writes, in order, with who caused them.
struct EventBatch: Sendable {
    let projectID: String
    let origin: EventOrigin
    let now: Int64
    private(set) var drafts: [EventDraft] = []

    init(projectID: String, origin: EventOrigin, now: Int64) {
        self.projectID = projectID
        self.origin = origin
        self.now = now
    }

    mutating func append(_ draft: EventDraft) { drafts.append(draft) }

    /// Sessions that ended for `reason` and the devices that went with them: each `session.ended`,
    /// then each `device.removed`, in ID order, so both backends write the same events in the same order.
    mutating func ended(
        sessions: [(id: String, profileID: String)], devices: [(id: String, profileID: String, sessionID: String)],
        reason: SessionEndReason
    ) {
        for session in sessions.sorted(by: { $0.id < $1.id }) {
            append(.sessionEnded(sessionID: session.id, profileID: session.profileID, reason: reason))
        }
        removed(devices: devices)
    }

    /// The events of a cleanup pass, one batch per project in project order: `session.ended`
    /// (`expired`) for each session that expired without a revoke, and `device.removed` for the
    /// devices deleted with them.
    static func expired(
        _ sessions: [(id: String, projectID: String, profileID: String, revoked: Bool)],
        devices: [(id: String, profileID: String, sessionID: String)], now: Int64
    ) -> [EventBatch] {
        var batches: [String: EventBatch] = [:]
        let projectOf = Dictionary(sessions.map { ($0.id, $0.projectID) }, uniquingKeysWith: { first, _ in first })
        for projectID in Set(sessions.map(\.projectID)) {
            var batch = EventBatch(projectID: projectID, origin: .cleanup, now: now)
            batch.ended(
                sessions: sessions.filter { $0.projectID == projectID && !$0.revoked }.map { ($0.id, $0.profileID) },
                devices: devices.filter { projectOf[$0.sessionID] == projectID }, reason: .expired)
            batches[projectID] = batch
        }
        return batches.keys.sorted().compactMap { batches[$0] }
    }

    /// The events of anonymous profiles deleted by retention, one batch per project in project order:
    /// for each project, `session.ended` (`expired`) for their sessions never revoked, `device.removed`
    /// for their devices, then `profile.erased` for each profile (in ID order), all as the cleanup service.
    static func retired(
        profiles: [(id: String, projectID: String)], aliases: [(id: String, profileID: String)],
        sessions: [(id: String, projectID: String, profileID: String, revoked: Bool)],
        devices: [(id: String, profileID: String, sessionID: String)], now: Int64
    ) -> [EventBatch] {
        let projectOf = Dictionary(profiles.map { ($0.id, $0.projectID) }, uniquingKeysWith: { first, _ in first })
        var batches: [EventBatch] = []
        for projectID in Set(profiles.map(\.projectID)).sorted() {
            var batch = EventBatch(projectID: projectID, origin: .cleanup, now: now)
            batch.ended(
                sessions: sessions.filter { $0.projectID == projectID && !$0.revoked }.map { ($0.id, $0.profileID) },
                devices: devices.filter { projectOf[$0.profileID] == projectID }, reason: .expired)
            for profile in profiles.filter({ $0.projectID == projectID }).sorted(by: { $0.id < $1.id }) {
                batch.append(
                    .profileErased(
                        profileID: profile.id, externalID: nil,
                        aliasIDs: aliases.filter { $0.profileID == profile.id }.map(\.id).sorted()))
            }
            batches.append(batch)
        }
        return batches
    }

    /// Devices that were deleted, in ID order.
    mutating func removed(devices: [(id: String, profileID: String, sessionID: String)]) {
        for device in devices.sorted(by: { $0.id < $1.id }) {
            append(.deviceRemoved(deviceID: device.id, profileID: device.profileID, sessionID: device.sessionID))
        }
    }
}
