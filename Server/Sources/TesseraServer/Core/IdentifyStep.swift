/// One write of an identify's transaction, as data: ``IdentifyProcedure`` lists them in order and
/// each backend only translates each to its SQL.
enum IdentifyStep: Sendable {
    /// Writes a new profile.
    case insertProfile(ProfileRecord)
    /// The anonymous profile becomes the identified user's, and its installations let go of it
    /// (they remember it as their previous profile).
    case promoteProfile(id: String, externalID: String, verified: Bool)
    /// Ends every live session of a profile (`replaced`), with their devices.
    case endProfileSessions(profileID: String)
    /// Ends one session (`replaced`), with its devices.
    case endSession(id: String)
    /// Folds profile `source` into `target`: its aliases and installations move, it becomes an alias
    /// and is deleted with its sessions and their devices (`profile.merged`).
    case fold(source: String, target: String, projectID: String)
    /// Records that the project's identity secret `kid` was used now.
    case recordSecretUse(projectID: String, kid: String)
    /// Sets the claims that are present on the profile, and reads the profile back: what identify
    /// answers.
    case updateClaims(profileID: String, name: String?, avatarURL: String?, email: String?)
    /// Ends the profile's live sessions beyond `limit - 1` (`evicted`), to make room for the new one.
    case evictSessions(profileID: String, limit: Int64)
    /// Writes the new session.
    case insertSession(SessionRecord, tokenHash: [UInt8])
    /// Remembers a verified session's device key for its profile (`profile.new_key` when it is new).
    case rememberKey(SessionRecord, jkt: String)
    /// An event that depends on nothing the database answers.
    case event(EventDraft)
}
