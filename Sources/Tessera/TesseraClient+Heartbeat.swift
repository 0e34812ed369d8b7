import Foundation

extension TesseraClient {
    /// Pauses the heartbeat (the app went to the background).
    public func enterBackground() {
        heartbeat.isInBackground = true
        heartbeat.maintenanceTask?.cancel()
        heartbeat.maintenanceTask = nil
    }

    /// Resumes the heartbeat; checks the session at once when the last check is older than one interval.
    public func enterForeground() {
        heartbeat.isInBackground = false
        syncWithStore()
        if state != nil || isStarted || !work.isStarting { ensureMaintenance() }
    }

    /// Stops the heartbeat for good (for command-line tools and tests). Public calls still work.
    public func stop() {
        heartbeat.maintenanceTask?.cancel()
        heartbeat.maintenanceTask = nil
        lifecycleObservation = nil
        heartbeat.isInBackground = true
    }

    /// Restarts the heartbeat loop so its next delay reflects a state that just changed
    /// (for example: no session any more, retry the anonymous one with backoff, not at the old deadline).
    func rescheduleMaintenance() {
        guard !heartbeat.isInBackground else { return }
        heartbeat.maintenanceTask?.cancel()
        heartbeat.maintenanceTask = nil
        ensureMaintenance()
    }

    func ensureMaintenance() {
        guard heartbeat.maintenanceTask == nil, !heartbeat.isInBackground else { return }
        heartbeat.maintenanceTask = Task { await self.runMaintenance() }
    }

    /// The heartbeat loop: sleeps on the injected clock, then checks the session (check-only), retries
    /// storage and the anonymous session, and flushes offline sign-outs. Transient failures back off
    /// exponentially with jitter; after `maxAttempts` the normal interval resumes.
    private func runMaintenance() async {
        var backoff = Heartbeat.Backoff()
        while !Task.isCancelled {
            let delay = heartbeat.nextDelay(backoff, state: state, clock: clock, configuration: configuration)
            do {
                try await clock.sleep(for: delay)
            } catch {
                return
            }
            if Task.isCancelled { return }
            work.taskBegan()
            let outcome = await tick()
            work.taskEnded()
            backoff.record(outcome, maxAttempts: configuration.backoff.maxAttempts)
        }
    }

    /// One heartbeat.
    func tick() async -> Heartbeat.TickOutcome {
        heartbeat.lastAttemptAt = clock.now()
        syncWithStore()
        if state == nil {
            do {
                try await start()
                return .done
            } catch {
                let error = TesseraError.wrapping(error)
                return error.isTransient ? .transientFailure(retryAfter: error.retryAfter) : .done
            }
        }
        if let reestablishTask = heartbeat.reestablishTask {
            await reestablishTask.value
            return .done
        }
        do {
            try loadDeviceKey()
        } catch {
            log(.warning, "device key not available (\(error.code)); backing off")
            return error.isTransient ? .transientFailure(retryAfter: nil) : .done
        }
        await recoverFromKeyLoss()
        await flushPendingRevocations()
        guard state?.session != nil else {
            guard heartbeat.autoEstablish else { return .done }
            do {
                _ = try await establishSession()
                return .done
            } catch {
                let error = TesseraError.wrapping(error)
                log(.warning, "anonymous session not created: \(error.code)")
                return error.isTransient ? .transientFailure(retryAfter: error.retryAfter) : .done
            }
        }
        // Checked with the server even when the device clock says it expired: only the server's answer
        // (`session_expired`, …) ends it, and its `server_time` corrects the clock's offset.
        do {
            _ = try await authenticateShared(durationMinutes: nil)
            return .done
        } catch {
            let error = TesseraError.wrapping(error)
            if error.isTransient {
                log(.info, "heartbeat failed (\(error.code)); backing off")
                return .transientFailure(retryAfter: error.retryAfter)
            }
            return .done
        }
    }

    // MARK: Shared requests

    /// `POST /v1/sessions/authenticate` for the current session; concurrent callers with the same
    /// duration under the same generation share one request.
    func authenticateShared(durationMinutes: Int?) async throws -> StoredSession {
        guard let current = state?.session else {
            throw TesseraError(.noSession, message: "There is no session.")
        }
        let key = ClientWork.AuthenticateKey(
            generation: ledger.generation, durationMinutes: durationMinutes, sessionToken: current.token)
        if let flight = work.join(\.authenticate, key) {
            return try await flight.value
        }
        let task = Task { try await self.performAuthenticate(key) }
        work.authenticate.begin(key, task)
        return try await task.value
    }

    private func performAuthenticate(_ key: ClientWork.AuthenticateKey) async throws -> StoredSession {
        defer { work.authenticate.end(key) }
        do {
            let envelope = try await api.authenticate(
                sessionToken: key.sessionToken, durationMinutes: key.durationMinutes)
            try check(key.generation)
            guard state?.session?.token == key.sessionToken else {
                throw TesseraError(.superseded, message: "The session changed while it was being checked.")
            }
            return apply(envelope)
        } catch let error as TesseraError where error.endsSession {
            if ledger.isCurrent(key.generation) {
                endSession(error.code == .sessionExpired ? .expired : .revoked, token: key.sessionToken)
            }
            throw error
        }
    }

    /// `POST /v1/sessions/anonymous` for this installation; concurrent callers share one request.
    /// A consumed installation (merged into a user) is replaced by a fresh one first.
    /// - Parameter lost: A current session to replace (one bound to a device key that is gone); without
    ///   it, a current session is answered as it is.
    func establishSession(replacing lost: StoredSession? = nil) async throws -> StoredSession {
        let gen = ledger.generation
        if let flight = work.join(\.establish, gen) {
            return try await flight.value
        }
        work.taskBegan()
        let task = Task {
            defer { self.work.taskEnded() }
            do {
                return try await self.performEstablish(generation: gen, replacing: lost?.token)
            } catch {
                self.noteEstablishFailure(TesseraError.wrapping(error))
                throw error
            }
        }
        work.establish.begin(gen, task)
        defer { work.establish.end(gen) }
        return try await task.value
    }

    /// Counts a failed anonymous session; a permanent one (not transient, not cancelled or overtaken)
    /// is published for the app to act on.
    private func noteEstablishFailure(_ error: TesseraError) {
        guard error.code != .superseded, error.code != .cancelled else { return }
        if let attempts = heartbeat.establishFailed(isTransient: error.isTransient) {
            log(.error, "anonymous session refused (\(error.code)); retrying once per heartbeat interval")
            eventBroadcaster.publish(.anonymousSessionFailed(error, attempts: attempts))
        }
    }
    private func performEstablish(generation gen: UInt64, replacing lost: String?) async throws -> StoredSession {
        guard state != nil else { throw TesseraError(.storageUnavailable) }
        // Another client of the store (the app, its extension) may have established one meanwhile.
        syncWithStore()
        if let established = state?.session, established.token != lost { return established }
        if state?.installationConsumed == true {
            state?.rotateInstallation()
            persist()
        }
        var attempt = 0
        // At most one App Attest retry per establish (a key the server does not know is re-attested, an
        // expired challenge replaced), never a loop.
        var retry: AppAttestation.Retry?
        var retried = false
        while attempt < 2 {
            guard let current = state else { break }
            let installationID = current.installationID.uuidString.lowercased()
            var body = AnonymousRequest(installationID: installationID, installationSecret: current.installationSecret)
            let api = self.api
            var prepared = AppAttestation.Prepared()
            do {
                let envelope = try await appAttestation.inTurn { () async throws(TesseraError) in
                    prepared = await appAttestation.forStart(
                        installationID: installationID, newKey: retry?.newKey ?? false,
                        challenge: { () async throws(TesseraError) in try await api.appAttestChallenge() })
                    body.evidence = prepared.evidence
                    return try await api.createAnonymousSession(body)
                }
                appAttestation.succeeded(prepared, installationID: installationID)
                if !ledger.isCurrent(gen) { await abandon(sessionToken: envelope.sessionToken) }
                try check(gen)
                if let established = state?.session, established.token != lost {
                    // An identify (with the publishable key) answered first: its session stays, this one ends.
                    await abandon(sessionToken: envelope.sessionToken)
                    return established
                }
                return apply(envelope)
            } catch {
                if !retried, let again = appAttestation.retry(after: error, sent: prepared, atIdentify: false) {
                    try check(gen)
                    retried = true
                    retry = again
                    continue
                }
                guard error.code == .installationConflict, attempt == 0 else { throw error }
                // Another secret owns this installation ID: never fight for it, take a new one.
                try check(gen)
                log(.warning, "installation conflict: starting a new installation")
                state?.rotateInstallation()
                persist()
                attempt += 1
            }
        }
        throw TesseraError(.installationConflict, message: "The installation ID is taken.")
    }
}
