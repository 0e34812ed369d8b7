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

/// An identify's transaction, written once for every backend: from the rows as the transaction
/// found them (on PostgreSQL, as it locked them), the writes to make, in order, and the answer.
///
/// A backend reads (and locks) the caller's session with its profile and the profile holding the
/// external ID, asks ``make(_:caller:existing:)``, writes ``steps`` in order and answers
/// ``result(profile:)`` with the profile its ``IdentifyStep/updateClaims(profileID:name:avatarURL:email:)``
/// read back.
struct IdentifyProcedure: Sendable {
    /// The writes, in order.
    var steps: [IdentifyStep]
    /// The new session, with its profile and installation.
    var session: SessionRecord
    /// The merge identify answers, if any.
    var merge: (outcome: MergeOutcome, fromProfileID: String)?
    /// Whether identify created the profile.
    var createdProfile: Bool

    /// Decides an identify's writes.
    ///
    /// - Parameters:
    ///   - caller: the calling session with its profile, as the transaction found them.
    ///   - existing: the profile that already has the external ID (same verification level), if any.
    /// - Throws: why the caller's session is no longer alive; what ``IdentifyPlan/decide(caller:existing:externalID:verified:)``
    ///   throws.
    static func make(_ command: IdentifyCommand, caller: SessionContext?, existing: ProfileRecord?)
        throws -> IdentifyProcedure
    {
        if let caller { try CredentialResolver.checkAlive(caller.session, now: command.now) }
        let plan = try IdentifyPlan.decide(
            caller: caller?.profile, existing: existing, externalID: command.externalID, verified: command.verified)
        var steps: [IdentifyStep] = []
        let profileID: String
        var merge: (outcome: MergeOutcome, fromProfileID: String)?
        var created = false
        // The profile whose name, avatar and email the claims may change (nil: a new one).
        var before: ProfileRecord?
        switch plan {
        case .create:
            let profile = newProfile(command)
            steps += [.insertProfile(profile), .event(.profileCreated(profileID: profile.id, kind: .identified))]
            profileID = profile.id
            created = true
        case .useExisting(let profile):
            profileID = profile.id
            before = profile
        case .unchanged(let profile):
            profileID = profile.id
            merge = (.unchanged, profile.id)
            before = profile
        case .promote(let anonymous):
            before = anonymous
            // Only the new session may hold the identified profile: every other session of the
            // anonymous one (an orphan of a dropped answer, another tab) never proved the identity.
            // They end (reason `replaced`) with their devices, the caller's included.
            steps += [
                .promoteProfile(id: anonymous.id, externalID: command.externalID, verified: command.verified),
                .event(.profilePromoted(profileID: anonymous.id, externalID: command.externalID)),
                .endProfileSessions(profileID: anonymous.id),
            ]
            profileID = anonymous.id
            merge = (.promoted, anonymous.id)
        case .merge(let anonymous, let target):
            before = target
            steps.append(.fold(source: anonymous.id, target: target.id, projectID: command.projectID))
            profileID = target.id
            merge = (.merged, anonymous.id)
        case .upgrade(let unverified):
            let profile = newProfile(command)
            steps += [
                .insertProfile(profile), .event(.profileCreated(profileID: profile.id, kind: .identified)),
                .fold(source: unverified.id, target: profile.id, projectID: command.projectID),
            ]
            profileID = profile.id
            merge = (.merged, unverified.id)
            created = true
        }
        if let caller, caller.profile.id.utf8.elementsEqual(profileID.utf8) {
            steps.append(.endSession(id: caller.session.id))
        }
        if let before {
            let changed = EventRules.changedProfileFields(
                before, name: command.name, avatarURL: command.avatarURL, email: command.email)
            if !changed.isEmpty { steps.append(.event(.profileUpdated(profileID: profileID, changed: changed))) }
        }
        if let kid = command.recordSecretUse {
            steps.append(.recordSecretUse(projectID: command.projectID, kid: kid))
        }
        steps.append(
            .updateClaims(profileID: profileID, name: command.name, avatarURL: command.avatarURL, email: command.email))
        var session = command.newSession
        session.profileID = profileID
        session.installationID = caller?.session.installationID
        if let limit = command.maxSessionsPerProfile {
            steps.append(.evictSessions(profileID: profileID, limit: limit))
        }
        steps += [.insertSession(session, tokenHash: command.sessionTokenHash), .event(.sessionCreated(session))]
        if session.kind == .verified, let jkt = session.jkt {
            steps.append(.rememberKey(session, jkt: jkt))
        }
        return IdentifyProcedure(steps: steps, session: session, merge: merge, createdProfile: created)
    }

    /// The profile identify creates (as the user's, or to upgrade an unverified one into).
    private static func newProfile(_ command: IdentifyCommand) -> ProfileRecord {
        ProfileRecord(
            id: command.newProfileID, projectID: command.projectID, kind: .identified, externalID: command.externalID,
            verified: command.verified, createdAt: command.now, updatedAt: command.now)
    }

    /// What identify answers, with the profile as its steps left it.
    func result(profile: ProfileRecord) -> IdentifyResult {
        IdentifyResult(
            context: SessionContext(session: session, profile: profile), merge: merge, createdProfile: createdProfile)
    }
}
