/// One write of an admin action on one profile (block, unblock, end its sessions, erase), as data:
/// ``ProfileAdminProcedure`` lists them in order and each backend only translates each to its SQL,
/// on the profile as its lock (on SQLite, the one writer) found it.
enum ProfileAdminStep: Sendable {
    /// Blocks the profile: a block keeps its first time; the reason is the latest given.
    case block(reason: String?)
    /// Lifts the profile's block.
    case unblock
    /// Ends the profile's sessions for `reason` (`session.ended`), with the devices of its sessions
    /// (`device.removed`): the live ones, or with `includingExpired` every one not revoked yet; with
    /// `profileDevices`, also every device registered to the profile.
    case endSessions(SessionEndReason, includingExpired: Bool, profileDevices: Bool)
    /// Removes the personal data of the profile and its aliases (`profileIDs`) from their earlier
    /// events and from the activity counts.
    case scrub(profileIDs: [String])
    /// Deletes the profile with its sessions and aliases; its installations let go of it.
    case delete
    /// An event that depends on nothing the database answers.
    case event(EventDraft)
}

/// The admin actions on one profile, decided once for both backends from the profile as the
/// transaction found it, as steps.
enum ProfileAdminProcedure {
    /// Blocks the profile (`profile.blocked` when it was not) and ends its sessions and devices, or
    /// lifts its block (`profile.unblocked` when it was blocked).
    static func setBlocked(_ blocked: Bool, reason: String?, profile: ProfileRecord) -> [ProfileAdminStep] {
        guard blocked else {
            return [.unblock] + (profile.blocked ? [.event(.profileUnblocked(profileID: profile.id))] : [])
        }
        return (profile.blocked ? [] : [.event(.profileBlocked(profileID: profile.id))]) + [
            .block(reason: reason), .endSessions(.blocked, includingExpired: false, profileDevices: true),
        ]
    }

    /// Ends the profile's live sessions (`admin`), with their devices.
    static let endSessions: [ProfileAdminStep] = [.endSessions(.admin, includingExpired: false, profileDevices: false)]

    /// Erases the profile: every session it has ends (`erased`), its devices go, its personal data
    /// leaves the earlier events (its aliases' too), then `profile.erased` and the profile goes.
    static func erase(_ profile: ProfileRecord, aliases: [String]) -> [ProfileAdminStep] {
        [
            .endSessions(.erased, includingExpired: true, profileDevices: true),
            .scrub(profileIDs: [profile.id] + aliases),
            .event(.profileErased(profileID: profile.id, externalID: profile.externalID, aliasIDs: aliases)),
            .delete,
        ]
    }
}

/// What an admin procedure's steps answered, as each backend translated them.
struct ProfileAdminOutcome: Sendable {
    /// How many sessions the steps ended.
    var ended = 0
    /// The profile as a block or an unblock left it.
    var profile: ProfileRecord?
}
