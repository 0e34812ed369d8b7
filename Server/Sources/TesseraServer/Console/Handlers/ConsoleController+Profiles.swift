import Foundation
import HTTPTypes
import Hummingbird

/// The overview, search, the profile list, a profile with its actions, and sessions.
extension ConsoleController {
    // MARK: Overview

    /// `GET /console/`: counts, active users, identify outcomes per day, App Attest, webhooks that fail,
    /// old secrets.
    func overview(_ request: ConsoleRequest) async throws -> Response {
        let runtime = request.runtime
        let now = core.currentTime().seconds
        let store = core.store
        let counts = counts.get(projectID: runtime.id, now: now) {
            try await store.projectCounts(projectID: runtime.id, now: now)
        }
        let activity = core.activeUsers.summary(projectID: runtime.id, now: now)
        let attestCounts = attestCounts.get(projectID: runtime.id, now: now) {
            try await store.appAttestCounts(projectID: runtime.id)
        }
        let attestMode = runtime.settings.appAttest.mode
        let webhooks = try await core.store.webhooks(projectID: runtime.id, afterID: nil, limit: 200)
        // Disabled, or holding an undelivered event older than five minutes.
        let behind = Dictionary(
            try await core.store.oldestPendingWebhookDeliveries().map { ($0.webhookID, $0.eventCreatedAt) },
            uniquingKeysWith: min)
        // The same state as the Webhooks pages: from the latest attempts ("failing" at once).
        var states: [String: String] = [:]
        for webhook in webhooks where webhook.enabled { states[webhook.id] = try await state(runtime, webhook) }
        let troubled = webhooks.filter { webhook in
            !webhook.enabled || (behind[webhook.id].map { now - $0 > Self.webhookBehindSeconds } ?? false)
                || states[webhook.id]?.hasPrefix("failing") == true || states[webhook.id]?.hasPrefix("retrying") == true
        }
        let secrets = try await core.store.identitySecrets(projectID: runtime.id)
        let old = secrets.filter { now - $0.createdAt > Self.oldSecretSeconds }
        return page(
            request,
            OverviewPage(
                counts: counts, activity: activity, attestMode: attestMode, attestCounts: attestCounts?.value,
                troubled: troubled, states: states, behind: behind, webhookCount: webhooks.count, oldSecrets: old,
                secretCount: secrets.count))
    }

    /// The most live sessions and devices a profile page lists (a profile may have thousands).
    static let rowsShown = 100

    /// How old an undelivered event makes a webhook one that needs attention.
    static let webhookBehindSeconds: Int64 = 300

    /// When an identity secret counts as old on the overview.
    static let oldSecretSeconds: Int64 = 90 * 86_400

    // MARK: Search

    /// `GET /console/search?q=`: any identifier to its profile (as `GET /v1/admin/lookup`).
    func search(_ request: ConsoleRequest) async throws -> Response {
        let text = request.query.value("q") ?? ""
        if InputRules.isIdentifier(text, prefix: "whk_"),
            try await core.store.webhook(projectID: request.runtime.id, id: text) != nil
        {
            return ConsoleHTTP.redirect(ConsoleURL("webhook", [("id", text)]))
        }
        if !text.isEmpty, text.unicodeScalars.count <= 320,
            let profile = try await core.store.lookupProfile(projectID: request.runtime.id, identifier: text)
        {
            return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id)]))
        }
        let found = SearchPage(text: text)
        return page(request, found, message: found.message, status: .notFound)
    }

    // MARK: Profiles

    /// `GET /console/profiles`: the profile list with the admin API's filters, newest first.
    func profiles(_ request: ConsoleRequest) async throws -> Response {
        let query = request.query
        let filter = try Self.profileFilter(query, projectID: request.runtime.id, limit: 50)
        var fetch = filter
        fetch.limit = filter.limit + 1
        async let counted = core.store.countProfiles(filter, cap: ProfilesPage.countCap)
        var found = try await core.store.profiles(fetch)
        let next = found.count > filter.limit ? found[filter.limit - 1].id : nil
        found = Array(found.prefix(filter.limit))
        let count = try await counted
        return page(
            request,
            ProfilesPage(
                query: query, filter: filter, count: count, profiles: found, next: next, viewer: request.viewer))
    }

    /// `GET /console/profiles.csv?kind=&verified=&blocked=&email=&external_id=&installation_id=`
    /// (admins and owners): every profile the filters match, newest first, as CSV (RFC 4180),
    /// written a thousand at a time. Each export is logged with the operator and the row count.
    func profilesCSV(_ request: ConsoleRequest) async throws -> Response {
        let first = try Self.profileFilter(request.query, projectID: request.runtime.id, limit: AuditCSV.batchSize)
        let store = core.store
        let logger = request.context.logger
        let operatorID = request.viewer.operatorID
        var headers: HTTPFields = [
            .contentType: "text/csv; charset=utf-8",
            .contentDisposition: "attachment; filename=\"tessera-profiles-\(request.runtime.id).csv\"",
        ]
        ConsoleHTTP.secure(&headers)
        let body = ResponseBody { writer in
            try await writer.write(
                ByteBuffer(string: "id,kind,external_id,email,name,verified,blocked_at,created_at,updated_at\r\n"))
            var (filter, rows) = (first, 0)
            while true {
                let batch = try await store.profiles(filter)
                var text = ""
                for profile in batch {
                    let fields = [
                        profile.id, profile.kind.rawValue, profile.externalID ?? "", profile.email ?? "",
                        profile.name ?? "", profile.verified ? "true" : "false",
                        profile.blockedAt.map(RFC3339.string) ?? "", RFC3339.string(profile.createdAt),
                        RFC3339.string(profile.updatedAt),
                    ]
                    text += fields.map(AuditCSV.field).joined(separator: ",") + "\r\n"
                }
                rows += batch.count
                if !text.isEmpty { try await writer.write(ByteBuffer(string: text)) }
                guard batch.count == filter.limit, let last = batch.last else { break }
                filter.beforeID = last.id
            }
            logger.notice("profiles exported as CSV", metadata: ["operator": "\(operatorID)", "rows": "\(rows)"])
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// The profile list's filters of a console query, parsed as `GET /v1/admin/profiles` parses
    /// them (``ProfileListQuery``): `kind`, `verified`, `blocked`, `email`, `search`,
    /// `external_id`, `installation_id`, `order` and `cursor`; an empty field is no filter.
    static func profileFilter(_ query: ConsoleForm, projectID: String, limit: Int) throws -> ProfileQuery {
        var filter = try ProfileListQuery.parse(projectID: projectID) { name in
            name == "limit" ? nil : query.value(name)
        }
        filter.limit = limit
        return filter
    }

    /// `true`/`false`/absent, as the list endpoint reads its flags.
    static func flag(_ value: String?, name: String) throws -> Bool? {
        switch value {
        case nil: return nil
        case "true": return true
        case "false": return false
        default: throw CoreError.invalidRequest("\(name) must be true or false.")
        }
    }

    // MARK: A profile

    /// `GET /console/profile?id=`: the profile, its live and ended sessions, devices, aliases and events.
    func profile(_ request: ConsoleRequest) async throws -> Response {
        let runtime = request.runtime
        guard let id = request.query.value("id"), InputRules.isIdentifier(id, prefix: "usr_"),
            let profile = try await core.store.profile(projectID: runtime.id, id: id)
        else { throw CoreError.notFound }
        let now = core.currentTime().seconds
        let (live, liveCount) = try await core.store.newestLiveSessions(
            profileID: profile.id, now: now, limit: Self.rowsShown)
        let devices = try await core.store.liveDevices(profileID: profile.id, now: now)
        let aliases = try await core.store.aliases(projectID: runtime.id, profileID: profile.id)
        let events = try await core.store.recentEvents(
            projectID: runtime.id, type: nil, profileID: profile.id, before: nil, limit: 100)
        // The operators who acted on it, by email (for the timeline and for who blocked it).
        var operatorEmails: [String: String] = [:]
        for id in Set(events.compactMap { $0.actor.kind == .operator ? $0.actor.id : nil }) {
            operatorEmails[id] = try await core.store.operatorRecord(id: id)?.email
        }
        let ended = try await core.store.recentEvents(
            projectID: runtime.id, type: "session.ended", profileID: profile.id, before: nil, limit: 100
        ).compactMap(EndedSession.init)
        let installationIDs = try await core.store.installationIDs(projectID: runtime.id, profileID: profile.id)
        let attestRecords = try await core.store.appAttestRecords(
            projectID: runtime.id, installationIDs: installationIDs)
        let clients = try await core.store.sessionClients(ids: live.map(\.id) + ended.map(\.sessionID))
        let installations = installationIDs.map { id in
            (id: id, record: attestRecords.first { $0.installationID == id })
        }
        return page(
            request,
            ProfilePage(
                profile: profile, live: live, liveCount: liveCount, ended: ended, devices: devices,
                installations: installations, aliases: aliases, events: events, clients: clients,
                operatorEmails: operatorEmails, viewer: request.viewer, refusal: request.refusal))
    }

    // MARK: Actions

    /// `POST /console/revoke-session`
    func revokeSession(_ request: ConsoleRequest) async throws -> Response {
        let profileID = request.form["profile_id"] ?? ""
        let sessionID = request.form["session_id"] ?? ""
        let profile = try await actions.profile(request.runtime, id: profileID)
        guard let target = try await core.store.sessionContext(sessionID: sessionID),
            target.session.profileID == profile.id
        else { throw CoreError.notFound }
        try await actions.endSession(
            request.runtime, sessionID: sessionID, origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id), ("notice", "revoked")]))
    }

    /// `POST /console/revoke-sessions`
    func revokeSessions(_ request: ConsoleRequest) async throws -> Response {
        let profileID = request.form["profile_id"] ?? ""
        let profile = try await actions.profile(request.runtime, id: profileID)
        try await actions.endSessions(
            request.runtime, profileID: profile.id, origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id), ("notice", "revoked-all")]))
    }

    /// `POST /console/remove-device`
    func removeDevice(_ request: ConsoleRequest) async throws -> Response {
        let profileID = request.form["profile_id"] ?? ""
        try await actions.removeDevice(
            request.runtime, profileID: profileID, deviceID: request.form["device_id"] ?? "",
            origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profileID), ("notice", "device-removed")]))
    }

    /// `POST /console/block` (password required)
    func block(_ request: ConsoleRequest) async throws -> Response {
        let reason = request.form.value("reason")
        let profile = try await actions.setBlocked(
            request.runtime, profileID: request.form["profile_id"] ?? "", blocked: true, reason: reason,
            origin: request.origin(addresses: addresses, reason: reason))
        request.context.logger.notice(
            "profile blocked in the console",
            metadata: ["profile": "\(profile.id)", "operator": "\(request.viewer.operatorID)"])
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id), ("notice", "blocked")]))
    }

    /// `POST /console/unblock`
    func unblock(_ request: ConsoleRequest) async throws -> Response {
        let profile = try await actions.setBlocked(
            request.runtime, profileID: request.form["profile_id"] ?? "", blocked: false, reason: nil,
            origin: request.origin(addresses: addresses))
        return ConsoleHTTP.redirect(ConsoleURL("profile", [("id", profile.id), ("notice", "unblocked")]))
    }

    /// `POST /console/erase` (password and the profile ID typed again)
    func erase(_ request: ConsoleRequest) async throws -> Response {
        let profileID = request.form["profile_id"] ?? ""
        guard request.form.value("confirm") == profileID else {
            throw ConsoleFailure.invalid(
                "confirm", "Type the profile ID exactly to confirm the erasure; nothing was erased.",
                code: "confirmation_mismatch")
        }
        try await actions.erase(request.runtime, profileID: profileID, origin: request.origin(addresses: addresses))
        request.context.logger.notice(
            "profile erased in the console",
            metadata: ["profile": "\(profileID)", "operator": "\(request.viewer.operatorID)"])
        return ConsoleHTTP.redirect(ConsoleURL("profiles", [("notice", "erased")]))
    }

    // MARK: Sessions

    /// `GET /console/sessions?state=&kind=&cursor=`: the most recent sessions (50 a page), each with
    /// its profile's email and external ID, its last client and why it ended.
    ///
    /// The page walks the `session.created` events newest first; with a filter, it reads at most
    /// ``sessionBatches`` batches of 50 for one page, and the pager continues after the last event
    /// read (a page of a rare state may hold fewer than 50 sessions).
    func sessions(_ request: ConsoleRequest) async throws -> Response {
        let runtime = request.runtime
        var cursor: Int64?
        if let text = request.query.value("cursor") {
            guard let value = Int64(text), value > 0 else {
                throw CoreError.invalidRequest("cursor is not a cursor of this list.")
            }
            cursor = value
        }
        let filter = try SessionFilter.parse(state: request.query.value("state"), kind: request.query.value("kind"))
        let now = core.currentTime().seconds
        var (rows, sessions, next): ([EventRecord], [String: SessionRecord], Int64?) = ([], [:], nil)
        scan: for _ in 0..<(filter.isEmpty ? 1 : Self.sessionBatches) {
            let batch = try await core.store.recentEvents(
                projectID: runtime.id, type: "session.created", profileID: nil, before: cursor, limit: 51)
            let examined = batch.prefix(50)
            let ids = examined.compactMap { EndedSession.field("session_id", in: $0.data) }
            for session in try await core.store.sessions(projectID: runtime.id, ids: ids) {
                sessions[session.id] = session
            }
            for event in examined {
                guard rows.count < 50 else {
                    next = rows.last?.sequence
                    break scan
                }
                cursor = event.sequence
                let session = EndedSession.field("session_id", in: event.data).flatMap { sessions[$0] }
                if filter.matches(event, session: session, now: now) { rows.append(event) }
            }
            next = batch.count > 50 ? cursor : nil
            if next == nil { break }
        }
        let shownIDs = rows.compactMap { EndedSession.field("session_id", in: $0.data) }
        let clients = try await core.store.sessionClients(ids: shownIDs)
        var profiles: [String: ProfileRecord] = [:]
        for profileID in Set(rows.compactMap(\.profileID)) {
            profiles[profileID] = try await core.store.profile(projectID: runtime.id, id: profileID)
        }
        // Why the ended sessions ended: each of their profiles' latest `session.ended` events.
        var endReasons: [String: String] = [:]
        let shown = Set(shownIDs)
        let endedProfiles = Set(shownIDs.compactMap { sessions[$0] }.filter { $0.revokedAt != nil }.map(\.profileID))
        for profileID in endedProfiles {
            let ended = try await core.store.recentEvents(
                projectID: runtime.id, type: "session.ended", profileID: profileID, before: nil, limit: 100)
            for end in ended.compactMap(EndedSession.init) where shown.contains(end.sessionID) {
                endReasons[end.sessionID] = endReasons[end.sessionID] ?? end.reason
            }
        }
        return self.page(
            request,
            SessionsPage(
                created: rows, sessions: sessions, profiles: profiles, clients: clients, endReasons: endReasons,
                filter: filter, next: next, now: now, viewer: request.viewer))
    }

    /// The most batches of 50 `session.created` events one filtered sessions page reads.
    static let sessionBatches = 10
}
