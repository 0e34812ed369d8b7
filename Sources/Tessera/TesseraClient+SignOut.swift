import Foundation

extension TesseraClient {
    /// Signs out in the one safe order:
    ///
    /// 1. unregister the push token with the session that registered it (so no push for this user
    ///    reaches the next person on the device),
    /// 2. revoke the session on the server,
    /// 3. clear the local session,
    /// 4. start a fresh anonymous identity — never the one that was merged into the signed-in user,
    /// 5. publish the change.
    ///
    /// Offline, steps 1–2 are queued and retried by the heartbeat; the local sign-out still happens.
    /// If the fresh anonymous session cannot be created now, the state is
    /// `unavailable(.signedOut)` until the heartbeat creates it.
    /// - Throws: `superseded` when a reset or identify overtook the sign-out before it cleared the session.
    public func signOut() async throws {
        _ = try await requireState()
        let gen = ledger.advance()
        ledger.identityOperations += 1
        defer { ledger.identityOperations -= 1 }
        let ended = state?.session
        let device = state?.device

        var deviceGone = device == nil
        if let device {
            deviceGone = await unregister(device)
            try check(gen)
        }
        var revoked = ended == nil
        if let ended {
            revoked = await revokeOnServer(token: ended.token)
            if !ledger.isCurrent(gen), revoked, state?.session?.token == ended.token {
                // Overtaken (by an identify that may yet fail), but the session is gone on the server: it must not
                // stay current, or the next heartbeat would find it revoked and the identity-token provider
                // would sign the user back in. The heartbeat starts the fresh anonymous identity.
                clearLocally(ended, reason: .signedOut)
                heartbeat.autoEstablish = true
            }
            try check(gen)
        }
        var pending: [PendingRevocation] = []
        if let ended, !revoked { pending.append(PendingRevocation(sessionToken: ended.token)) }
        if let device, !deviceGone, !(revoked && device.sessionToken == ended?.token) {
            if let index = pending.firstIndex(where: { $0.sessionToken == device.sessionToken }) {
                pending[index].deviceID = device.device.id
            } else {
                pending.append(PendingRevocation(sessionToken: device.sessionToken, deviceID: device.device.id))
            }
        }
        // A session (or push token) that replaced the captured one while this sign-out was under way —
        // a refresh or re-establishment of the same identity, since nothing that bumps the generation
        // overtook us — belongs to the identity being signed out: it must not outlive the clear below.
        let overtaken = ledger.revocations(replacing: ended?.token, device: device).filter { item in
            !pending.contains { $0.sessionToken == item.sessionToken }
        }
        heartbeat.autoEstablish = true
        endLocalSession(.signedOut, pushTokens: .any, queueing: pending + overtaken, consumesInstallation: true)
        log(.info, "signed out")
        eventBroadcaster.publish(.signedOut)
        for item in overtaken { await flush(item) }
        do {
            _ = try await establishSession()
        } catch {
            log(.warning, "fresh anonymous session not created yet: \(TesseraError.wrapping(error).code)")
        }
        rescheduleMaintenance()
    }

    /// Unregisters the push token with the session that registered it (even when that session is no
    /// longer the current one). A token the server already dropped (its session ended) counts as unregistered.
    public func unregisterCurrentDeviceToken() async throws {
        guard let device = try await requireState().device else { return }
        try await api.unregisterDevice(id: device.device.id, credential: device.sessionToken)
        if state?.device == device {
            state?.device = nil
            persist()
        }
    }

    /// Clears the local session and ends it on the server, without starting a new identity.
    ///
    /// The local part happens at once, offline too. Then, in the order ``signOut()`` uses, the push token
    /// is unregistered with the session that registered it and the session is revoked (queued and retried
    /// by the heartbeat when the network is down): a session the client lets go of must not stay alive,
    /// nor keep receiving pushes. Call ``refreshSession()`` (or ``identify(signedIdentityToken:)``) to
    /// have a session again.
    public func clearSession() async throws {
        _ = try await requireState()
        ledger.advance()
        let items = ledger.unqueued(ledger.revocations(endingAllBut: nil))
        heartbeat.autoEstablish = false
        endLocalSession(.signedOut, pushTokens: .any, queueing: items)
        for item in items { await flush(item) }
    }

    /// Makes sure there is a live session: checks the current one with the server (and gets a fresh
    /// session JWT), or, when there is none, starts a fresh anonymous identity.
    @discardableResult
    public func refreshSession() async throws -> Session {
        _ = try await requireState()
        if state?.session != nil {
            return try await authenticateShared(durationMinutes: nil).session
        }
        heartbeat.autoEstablish = true
        return try await establishSession().session
    }

    /// Replaces the installation identity and removes everything of the old one from the store, ends the
    /// old installation's session and push token on the server, then starts a fresh anonymous session.
    ///
    /// The local part happens at once, offline too. Then, in the order ``signOut()`` uses, the old push
    /// token is unregistered and the old session revoked (queued and retried by the heartbeat when the
    /// network is down: until then the store keeps only those two credentials, to revoke them), and the
    /// fresh anonymous session is created, unless an identify, sign-out or reset overtook this reset
    /// meanwhile (that call decides the session then).
    /// - Throws: `storage_unavailable` (nothing changed) when the store cannot be written now; the network
    ///   error when the fresh anonymous session could not be created (the heartbeat retries).
    public func reset() async throws {
        try configuration.validate()
        // Before the store was read, what it holds is read first: the old session and push token must be
        // ended on the server, not deleted unread (the previous user's pushes would keep arriving).
        // What another client of the store (the app's extension) wrote meanwhile is abandoned too: read first.
        syncWithStore()
        let previous = try state ?? storedStateUnadopted()
        // The fresh installation replaces the stored state in one merged write (what another client queued
        // for revocation meanwhile stays queued); nothing changes when the store cannot be written now.
        let kept = state
        state = SessionLedger.freshInstallation(abandoning: previous, reason: .signedOut)
        do {
            try persistMerged()
        } catch {
            state = kept
            throw TesseraError(.storageUnavailable, message: "The credential store cannot be written now.")
        }
        let gen = ledger.advance()
        heartbeat.autoEstablish = true
        heartbeat.dropReestablishment()
        publishCurrent()
        log(.info, "reset: new installation")
        eventBroadcaster.publish(.reset)
        defer { rescheduleMaintenance() }
        await flushPendingRevocations()
        guard ledger.isCurrent(gen) else { return }
        _ = try await establishSession()
    }

    /// The stored state, read without adopting it: nil when there is none, or when it is corrupted or of
    /// another version (nothing in it can be used). Throws `storage_unavailable` when it cannot be read now.
    func storedStateUnadopted() throws(TesseraError) -> PersistedState? {
        let data: Data?
        do {
            data = try store.load(configuration.storageKey)
        } catch {
            switch error {
            case .unavailable:
                throw TesseraError(.storageUnavailable, message: "The credential store cannot be read now.")
            case .denied:
                throw TesseraError(.storageAccessDenied, message: "Access to the credential store was refused.")
            case .corrupted, .misconfigured:
                return nil
            }
        }
        guard let data, let stored = try? WireCoding.decoder().decode(PersistedState.self, from: data),
            stored.version == PersistedState.currentVersion
        else { return nil }
        return stored
    }

    // MARK: Steps

    /// Unregisters with the registering session's own credential; false only when a retry may succeed.
    func unregister(_ device: StoredDevice) async -> Bool {
        do {
            try await api.unregisterDevice(id: device.device.id, credential: device.sessionToken)
            return true
        } catch {
            log(.warning, "push token not unregistered: \(error.code)")
            return !Self.mayRetry(error)
        }
    }

    /// Revokes a session; false only when a retry may succeed (offline, 5xx, 429, cancelled).
    func revokeOnServer(token: String) async -> Bool {
        do {
            try await api.revokeIfAlive(sessionToken: token)
            return true
        } catch {
            log(.warning, "session not revoked: \(error.code)")
            return !Self.mayRetry(error)
        }
    }

    /// Whether a revocation or unregistration that failed with `error` must stay queued: transient
    /// errors, and cancellation (the heartbeat's task is cancelled when the app goes to the background,
    /// and the request may never have reached the server).
    static func mayRetry(_ error: TesseraError) -> Bool {
        error.isTransient || error.code == .cancelled
    }

    /// Retries the revocations queued by an offline sign-out, a reset or a dropped answer.
    func flushPendingRevocations() async {
        guard let pending = state?.pendingRevocations, !pending.isEmpty else { return }
        for item in pending {
            await flush(item)
        }
    }

    /// Unregisters the item's device, then revokes its session; removes it from the queue once both are
    /// done (or can never succeed).
    func flush(_ item: PendingRevocation) async {
        var done = true
        if let deviceID = item.deviceID {
            do {
                try await api.unregisterDevice(id: deviceID, credential: item.sessionToken)
            } catch {
                done = !Self.mayRetry(error)
            }
        }
        if done { done = await revokeOnServer(token: item.sessionToken) }
        if done, ledger.dequeue(item) { persist() }
    }

    /// Ends on the server a session whose answer was dropped because a newer identify, sign-out or reset
    /// overtook the call that asked for it: nobody will ever use it, so it must not stay alive. Queued
    /// first (the heartbeat retries it if the network fails now), then revoked.
    func abandon(sessionToken: String) async {
        let item = PendingRevocation(sessionToken: sessionToken)
        if state != nil {
            ledger.queue(item)
            persist()
        }
        await flush(item)
    }
}
