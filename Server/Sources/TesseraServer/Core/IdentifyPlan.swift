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
    /// An anonymous (or unverified) caller and an existing profile: fold the caller's profile into it,
    /// keep an alias.
    case merge(anonymous: ProfileRecord, into: ProfileRecord)
    /// An unverified caller signing in with a signed token for its own user ID, and no verified profile
    /// has it yet: create the verified profile and fold the unverified one into it, keep an alias.
    case upgrade(unverified: ProfileRecord)
    /// The caller is already this user.
    case unchanged(ProfileRecord)

    /// Decides what identify does.
    ///
    /// - Parameters:
    ///   - caller: the profile of the calling session, if identify was called with one.
    ///   - existing: the profile that already has this external ID (same verification level), if any.
    ///   - externalID: the `sub` (or asserted user ID).
    ///   - verified: whether it was established by a signed identity token.
    ///
    /// External IDs are compared byte for byte, as the storage compares them: `é` (NFC) and `e` with a
    /// combining acute (NFD) are two users, never one (Swift's `==` would say one).
    /// - Throws: `external_user_id_changed` when the caller is another identified user;
    ///   `profile_blocked` when the profile signed in to, merged into or carried over is blocked.
    public static func decide(
        caller: ProfileRecord?, existing: ProfileRecord?, externalID: String, verified: Bool
    ) throws(CoreError) -> IdentifyPlan {
        if existing?.blocked == true || caller?.blocked == true { throw CoreError.profileBlocked }
        guard let caller else {
            return existing.map { .useExisting($0) } ?? .create
        }
        switch caller.kind {
        case .identified:
            let sameUser = caller.externalID.map { $0.utf8.elementsEqual(externalID.utf8) } ?? false
            if sameUser, caller.verified == verified {
                return .unchanged(caller)
            }
            if sameUser, verified, !caller.verified {
                // An unverified session proving its user ID: the asserted profile upgrades.
                return existing.map { .merge(anonymous: caller, into: $0) } ?? .upgrade(unverified: caller)
            }
            throw CoreError(
                .externalUserIDChanged,
                "This session belongs to another user; sign out before identifying a different one.")
        case .anonymous:
            if let existing {
                return .merge(anonymous: caller, into: existing)
            }
            return .promote(caller)
        }
    }
}
