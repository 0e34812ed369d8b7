/// The merge of a client's state into the state another client of the same store (an app and its
/// extension) wrote meanwhile: the store is the source of truth, and a client's memory only carries
/// the changes it made since it last read or wrote the store.
///
/// A three-way merge, field by field, against `base` (what this client last read or wrote):
/// - a field only one side changed takes that side's value;
/// - the session, when both sides replaced it: the signed-in one over the anonymous one over none,
///   the stored one on a tie; the session that loses is queued for revocation (it must not stay alive);
/// - the same session on both sides (refreshed by either): the one validated last;
/// - the installation follows the side that rotated it; "consumed" is kept when either side says so;
/// - queued revocations: the stored queue, plus what this client queued, minus what it flushed.
///
/// Without a base (this client never read the store: a reset or a hydration before its start), its
/// state replaces the stored one, whose session, when it is another, is queued for revocation with the
/// stored queue: the other client made it, and nothing holds it any more.
enum StateMerge {
    static func merge(base: PersistedState?, mine: PersistedState, theirs: PersistedState?) -> PersistedState {
        guard let theirs else { return mine }
        guard let base else { return replace(theirs, with: mine) }
        if theirs == base { return mine }
        if mine == base { return theirs }
        var merged = theirs

        // The installation.
        let mineRotated = mine.installationID != base.installationID
        let theirsRotated = theirs.installationID != base.installationID
        if mineRotated && !theirsRotated {
            merged.installationID = mine.installationID
            merged.installationSecret = mine.installationSecret
            merged.installationConsumed = mine.installationConsumed
        } else if mine.installationID == theirs.installationID {
            merged.installationConsumed = mine.installationConsumed || theirs.installationConsumed
        }

        // The session.
        var orphans: [PendingRevocation] = []
        let mineReplaced = mine.session?.token != base.session?.token
        let theirsReplaced = theirs.session?.token != base.session?.token
        let sessionFromMine: Bool
        if mine.session?.token == theirs.session?.token {
            sessionFromMine =
                (mine.session?.lastValidatedAt ?? .distantPast) > (theirs.session?.lastValidatedAt ?? .distantPast)
        } else if mineReplaced && theirsReplaced {
            sessionFromMine = rank(mine.session) > rank(theirs.session)
            let loser = sessionFromMine ? theirs.session : mine.session
            if let loser { orphans.append(PendingRevocation(sessionToken: loser.token)) }
        } else {
            sessionFromMine = mineReplaced
        }
        if sessionFromMine {
            merged.session = mine.session
            merged.lastEndReason = mine.lastEndReason
        }

        // The push token registration.
        let mineDeviceChanged = mine.device != base.device
        let theirsDeviceChanged = theirs.device != base.device
        if mineDeviceChanged && !theirsDeviceChanged {
            merged.device = mine.device
        } else if mineDeviceChanged && theirsDeviceChanged, mine.device?.sessionToken == merged.session?.token,
            theirs.device?.sessionToken != merged.session?.token
        {
            merged.device = mine.device
        }
        if let device = merged.device, orphans.contains(where: { $0.sessionToken == device.sessionToken }) {
            // Its session is revoked: the server drops the push token with it.
            merged.device = nil
        }

        // Queued revocations.
        let queuedByMe = mine.pendingRevocations.filter { !base.pendingRevocations.contains($0) }
        let flushedByMe = base.pendingRevocations.filter { !mine.pendingRevocations.contains($0) }
        var pending = theirs.pendingRevocations.filter { !flushedByMe.contains($0) }
        for item in queuedByMe + orphans where !pending.contains(item) { pending.append(item) }
        merged.pendingRevocations = pending.filter { $0.sessionToken != merged.session?.token }
        if merged.installMarker == nil { merged.installMarker = mine.installMarker }
        return merged
    }

    /// `mine` written over `theirs`, which this client never read: the stored session (another's) and
    /// the stored queue are not dropped but queued, so that nothing left alive on the server is forgotten.
    private static func replace(_ theirs: PersistedState, with mine: PersistedState) -> PersistedState {
        var merged = mine
        var pending = mine.pendingRevocations
        var dropped = theirs.pendingRevocations
        if let session = theirs.session { dropped.append(PendingRevocation(sessionToken: session.token)) }
        for item in dropped where !pending.contains(where: { $0.sessionToken == item.sessionToken }) {
            pending.append(item)
        }
        merged.pendingRevocations = pending.filter { $0.sessionToken != merged.session?.token }
        if merged.installMarker == nil { merged.installMarker = theirs.installMarker }
        return merged
    }

    /// The signed-in session over the anonymous one over none.
    private static func rank(_ session: StoredSession?) -> Int {
        guard let session else { return 0 }
        return session.capabilities.kind == .anonymous ? 1 : 2
    }
}
