/// The decision identify makes about profiles; every backend applies it inside its transaction.
///
/// Keeping the decision here means the merge rules are written once, whatever the database.
public enum IdentifyPlan: Sendable, Equatable {
    /// No caller and no profile with this external ID: create one.
    case create
    /// No caller, and the profile exists: sign in to it.
    case useExisting(ProfileRecord)
    /// An anonymous caller and no profile with this external ID: the anonymous profile becomes it.
    case promote(ProfileRecord)
    /// An anonymous caller and an existing profile: fold the anonymous one into it, keep an alias.
    case merge(anonymous: ProfileRecord, into: ProfileRecord)
    /// The caller is already this user.
    case unchanged(ProfileRecord)

    /// Decides what identify does.
    ///
    /// - Parameters:
    ///   - caller: the profile of the calling session, if identify was called with one.
    ///   - existing: the profile that already has this external ID (same verification level), if any.
    ///   - externalID: the `sub` (or asserted user ID).
    ///   - verified: whether it was established by a signed identity token.
    /// - Throws: `409 external_user_id_changed` when the caller is another identified user;
    ///   `403 profile_blocked` when the profile signed in to, merged into or carried over is blocked.
    public static func decide(
        caller: ProfileRecord?, existing: ProfileRecord?, externalID: String, verified: Bool
    ) throws(APIError) -> IdentifyPlan {
        if existing?.blocked == true || caller?.blocked == true { throw APIError.profileBlocked }
        guard let caller else {
            return existing.map { .useExisting($0) } ?? .create
        }
        switch caller.kind {
        case .identified:
            guard caller.externalID == externalID, caller.verified == verified else {
                throw APIError(
                    .conflict, .externalUserIDChanged,
                    "This session belongs to another user; sign out before identifying a different one.")
            }
            return .unchanged(caller)
        case .anonymous:
            if let existing {
                return .merge(anonymous: caller, into: existing)
            }
            return .promote(caller)
        }
    }
}
