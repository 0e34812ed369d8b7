extension SQLiteStore {
    /// Translates an admin procedure's steps on `profile` (as `onLockedProfile`'s transaction found
    /// it) to SQL, in order.
    @discardableResult
    static func write(
        _ steps: [ProfileAdminStep], on profile: ProfileRecord, now: Int64, batch: inout EventBatch,
        in connection: SQLiteConnection
    ) throws -> ProfileAdminOutcome {
        /// The profile as the steps so far left it.
        func current() throws -> ProfileRecord? {
            try connection.queryFirst("SELECT \(profileColumns) FROM profiles WHERE id = ?", [.init(profile.id)])
                .map { Self.profile($0) }
        }
        var outcome = ProfileAdminOutcome()
        for step in steps {
            switch step {
            case .block(let reason):
                try connection.run(
                    "UPDATE profiles SET blocked_at = COALESCE(blocked_at, ?), blocked_reason = ? WHERE id = ?",
                    [.init(now), .init(reason), .init(profile.id)])
                outcome.profile = try current()
            case .unblock:
                try connection.run(
                    "UPDATE profiles SET blocked_at = NULL, blocked_reason = NULL WHERE id = ?", [.init(profile.id)])
                outcome.profile = try current()
            case .endSessions(let reason, let includingExpired, let profileDevices):
                outcome.ended += try endSessions(
                    where: includingExpired ? "profile_id = ?" : "profile_id = ? AND expires_at > ?",
                    includingExpired ? [.init(profile.id)] : [.init(profile.id), .init(now)], reason: reason, now: now,
                    devicesWhere: (profileDevices ? "profile_id = ? OR " : "")
                        + "session_id IN (SELECT id FROM sessions WHERE profile_id = ?)",
                    (profileDevices ? [.init(profile.id)] : []) + [.init(profile.id)], batch: &batch, in: connection)
            case .scrub(let profileIDs):
                try scrubEvents(projectID: profile.projectID, profileIDs: profileIDs, in: connection)
                try anonymiseActivity(projectID: profile.projectID, profileIDs: profileIDs, in: connection)
            case .delete:
                try connection.run("DELETE FROM sessions WHERE profile_id = ?", [.init(profile.id)])
                try connection.run("DELETE FROM profile_aliases WHERE profile_id = ?", [.init(profile.id)])
                try connection.run(
                    "UPDATE installations SET profile_id = NULL WHERE profile_id = ?", [.init(profile.id)])
                try connection.run(
                    "UPDATE installations SET previous_profile_id = NULL WHERE previous_profile_id = ?",
                    [.init(profile.id)])
                try connection.run("DELETE FROM profiles WHERE id = ?", [.init(profile.id)])
            case .event(let draft):
                batch.append(draft)
            }
        }
        return outcome
    }
}
