import TesseraTokens

/// One write of an anonymous start's transaction, as data: ``AnonymousStartProcedure`` lists them
/// in order and each backend only translates each to its SQL.
enum AnonymousStartStep: Sendable {
    /// Writes a new anonymous profile.
    case insertProfile(ProfileRecord)
    /// Writes the new installation, with its secret's hash, owned by `profileID`.
    case insertInstallation(profileID: String)
    /// The installation, which has no profile any more (it was erased or identified away), now
    /// belongs to `profileID`.
    case attachInstallation(profileID: String)
    /// Ends the installation's live sessions of `profileID` bound to a device key other than `jkt`
    /// (`replaced`), with their devices: a restore with a new key (a new phone, a wiped enclave)
    /// leaves nothing that can present the old one.
    case endOtherKeySessions(profileID: String, jkt: String)
    /// Ends the profile's live sessions beyond `limit - 1` (`evicted`), to make room for the new one.
    case evictSessions(profileID: String, limit: Int64)
    /// Writes the new session.
    case insertSession(SessionRecord, tokenHash: [UInt8])
    /// An event that depends on nothing the database answers.
    case event(EventDraft)
}

/// An anonymous start's transaction, decided once for both backends: the checks on the
/// installation and its profile as the transaction found them, then the writes as steps.
struct AnonymousStartProcedure: Sendable {
    /// The writes, in order.
    var steps: [AnonymousStartStep]
    /// The new session with its profile: what the start answers.
    var context: SessionContext
    /// Whether the start created the installation.
    var createdInstallation: Bool

    /// Decides an anonymous start's writes.
    ///
    /// - Parameters:
    ///   - request: the start.
    ///   - storedSecretHash: the installation's secret hash as stored; nil when the installation is new.
    ///   - current: the installation's profile as the transaction found (on PostgreSQL, locked) it;
    ///     nil when the installation is new or has no profile.
    /// - Throws: `installation_conflict` when the secret does not match the installation's,
    ///   `attestation_required` when the App Attest gate passed the start as a restore of an
    ///   installation that is gone, `profile_blocked` when the installation's profile is blocked.
    static func make(_ request: AnonymousStart, storedSecretHash: [UInt8]?, current: ProfileRecord?)
        throws -> AnonymousStartProcedure
    {
        if let storedSecretHash {
            guard OpaqueToken.constantTimeEquals(storedSecretHash, request.installationSecretHash) else {
                throw CoreError.installationConflict
            }
        } else if request.refusesNewInstallation {
            throw CoreError.attestationRequired
        }
        let now = request.newSession.createdAt
        var steps: [AnonymousStartStep] = []
        let profile: ProfileRecord
        if let current {
            if current.blocked { throw CoreError.profileBlocked }
            profile = current
        } else {
            profile = ProfileRecord(
                id: request.newProfileID, projectID: request.projectID, kind: .anonymous, externalID: nil,
                verified: false, createdAt: now, updatedAt: now)
            steps.append(.insertProfile(profile))
            steps.append(.event(.profileCreated(profileID: profile.id, kind: .anonymous)))
            steps.append(
                storedSecretHash == nil
                    ? .insertInstallation(profileID: profile.id) : .attachInstallation(profileID: profile.id))
        }
        var session = request.newSession
        session.profileID = profile.id
        session.installationID = request.installationID
        // A new profile has no session to end or evict.
        if current != nil {
            if let jkt = session.jkt { steps.append(.endOtherKeySessions(profileID: profile.id, jkt: jkt)) }
            if let limit = request.maxSessionsPerProfile {
                steps.append(.evictSessions(profileID: profile.id, limit: limit))
            }
        }
        steps.append(.insertSession(session, tokenHash: request.sessionTokenHash))
        steps.append(.event(.sessionCreated(session)))
        return AnonymousStartProcedure(
            steps: steps, context: SessionContext(session: session, profile: profile),
            createdInstallation: storedSecretHash == nil)
    }
}
