/// The session ledger: the state the client keeps (the current session, its push token, the queue of
/// revocations still owed to the server), the *generation* that orders the calls that change it, and the
/// one way the local session ends.
///
/// A plain value owned by ``TesseraClient``: it decides what the state becomes; the client persists
/// and publishes it, and talks to the server.
struct SessionLedger {
    /// Which push token goes when the local session ends.
    enum PushTokenRule {
        /// Only the one bound to the ending session (the server dropped it with that session).
        case boundToEndedSession
        /// Whichever is registered, except one bound to the kept session.
        case any
    }

    /// The loaded state; nil until the store was read.
    var state: PersistedState?
    /// What the store held when this client last read or wrote it: the base of the merge of `state`
    /// into what another client of the store wrote since (see ``StateMerge``).
    var stored: PersistedState?
    /// Bumped by identify, sign-out, reset, clear, hydration and the end of a session.
    private(set) var generation: UInt64 = 0
    /// How many of the bumps of ``generation`` were identifies.
    private(set) var identifyGenerations: UInt64 = 0
    /// Identify / sign-out / hydration calls in flight: a session end noticed meanwhile is theirs to resolve.
    var identityOperations = 0

    /// Starts a new generation: whatever began under an older one is dropped when it answers.
    @discardableResult
    mutating func advance() -> UInt64 {
        generation &+= 1
        return generation
    }

    /// Starts a new generation for an identify.
    @discardableResult
    mutating func advanceForIdentify() -> UInt64 {
        identifyGenerations &+= 1
        return advance()
    }

    /// Whether `gen` is still the current generation.
    func isCurrent(_ gen: UInt64) -> Bool { gen == generation }

    /// Throws `superseded` when a newer identify, sign-out or reset started since `gen`.
    func check(_ gen: UInt64) throws(TesseraError) {
        guard isCurrent(gen) else {
            throw TesseraError(.superseded, message: "A newer identify, sign-out or reset replaced this call.")
        }
    }

    /// Whether the only calls that started since `gen` (when `identifiesBefore` identifies had started)
    /// are identifies.
    func onlyIdentifiesStarted(since gen: UInt64, identifiesBefore: UInt64) -> Bool {
        generation &- gen == identifyGenerations &- identifiesBefore
    }

    // MARK: Ending the local session

    /// Ends the local session — the one place it happens (server-ended sessions, sign-out, clear, hydration):
    /// queues `revocations` after those already queued, forgets the session (unless its token is `kept`)
    /// and the push token as `pushTokens` says, records `reason`, and marks the installation consumed
    /// when the session that ends was not anonymous (or when `consumesInstallation`): an identified
    /// installation never gives an anonymous session again.
    /// - Returns: The session that ended, if any.
    @discardableResult
    mutating func endSession(
        _ reason: UnavailableReason, keeping kept: String? = nil, pushTokens: PushTokenRule,
        queueing revocations: [PendingRevocation] = [], consumesInstallation: Bool = false
    ) -> StoredSession? {
        guard state != nil else { return nil }
        let ended = state?.session.flatMap { $0.token == kept ? nil : $0 }
        state?.pendingRevocations += revocations
        if ended != nil { state?.session = nil }
        switch pushTokens {
        case .boundToEndedSession:
            if let ended, state?.device?.sessionToken == ended.token { state?.device = nil }
        case .any:
            if state?.device?.sessionToken != kept || kept == nil { state?.device = nil }
        }
        state?.lastEndReason = reason
        if consumesInstallation || (ended.map { $0.capabilities.kind != .anonymous } ?? false) {
            state?.installationConsumed = true
        }
        return ended
    }

    /// What must still be revoked on the server when the local session ends, keeping only the session of
    /// token `kept` (and its push token): the session and the push token (with the session that
    /// registered it), not counting what is queued already.
    func revocations(endingAllBut kept: String?) -> [PendingRevocation] {
        var leaving = state
        leaving?.pendingRevocations = []
        if let kept, leaving?.session?.token == kept { leaving?.session = nil }
        if let kept, leaving?.device?.sessionToken == kept { leaving?.device = nil }
        return Self.revocations(leaving: leaving)
    }

    /// What replaced the session of token `session` and the push token `device` since a sign-out captured
    /// them (a refresh or a re-establishment of the same identity): owed to the server too, not counting
    /// what is queued already.
    func revocations(replacing session: String?, device: StoredDevice?) -> [PendingRevocation] {
        var overtaking = state
        overtaking?.pendingRevocations = []
        if overtaking?.session?.token == session { overtaking?.session = nil }
        if overtaking?.device == device { overtaking?.device = nil }
        return Self.revocations(leaving: overtaking)
    }

    /// `items` without those queued already.
    func unqueued(_ items: [PendingRevocation]) -> [PendingRevocation] {
        let queued = state?.pendingRevocations ?? []
        return items.filter { !queued.contains($0) }
    }

    /// Queues a revocation (when the state is loaded).
    mutating func queue(_ item: PendingRevocation) {
        if state != nil { state?.pendingRevocations.append(item) }
    }

    /// Removes a revocation the server acknowledged (or that can never succeed); false when it was not queued.
    mutating func dequeue(_ item: PendingRevocation) -> Bool {
        guard state?.pendingRevocations.contains(item) == true else { return false }
        state?.pendingRevocations.removeAll { $0 == item }
        return true
    }

    /// What must still be revoked on the server when `state` is abandoned: its queued revocations, its
    /// session, and its push token (with the session that registered it; unregistered before that session
    /// is revoked).
    static func revocations(leaving state: PersistedState?) -> [PendingRevocation] {
        guard let state else { return [] }
        var pending = state.pendingRevocations
        if let session = state.session, !pending.contains(where: { $0.sessionToken == session.token }) {
            pending.append(PendingRevocation(sessionToken: session.token))
        }
        if let device = state.device {
            if let index = pending.firstIndex(where: { $0.sessionToken == device.sessionToken }) {
                pending[index].deviceID = device.device.id
            } else {
                pending.append(PendingRevocation(sessionToken: device.sessionToken, deviceID: device.device.id))
            }
        }
        return pending
    }

    /// A new installation that replaces `previous` (reset, reinstall): it owes the server everything
    /// `previous` leaves behind.
    static func freshInstallation(abandoning previous: PersistedState?, reason: UnavailableReason?) -> PersistedState {
        var fresh = PersistedState.freshInstallation()
        fresh.lastEndReason = reason
        fresh.pendingRevocations = revocations(leaving: previous)
        return fresh
    }
}
