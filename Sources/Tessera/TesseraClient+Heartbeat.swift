import Foundation

extension TesseraClient {
    enum TickOutcome: Equatable {
        case done
        case transientFailure(retryAfter: Duration?)
    }

    /// Pauses the heartbeat (the app went to the background).
    public func enterBackground() {
        isInBackground = true
        maintenanceTask?.cancel()
        maintenanceTask = nil
    }

    /// Resumes the heartbeat; checks the session at once when the last check is older than one interval.
    public func enterForeground() {
        isInBackground = false
        if state != nil || isStarted || startFlight == nil { ensureMaintenance() }
    }

    /// Stops the heartbeat for good (for command-line tools and tests). Public calls still work.
    public func stop() {
        maintenanceTask?.cancel()
        maintenanceTask = nil
        lifecycleObservation = nil
        isInBackground = true
    }

    /// Restarts the heartbeat loop so its next delay reflects a state that just changed
    /// (for example: no session any more, retry the anonymous one with backoff, not at the old deadline).
    func rescheduleMaintenance() {
        guard !isInBackground else { return }
        maintenanceTask?.cancel()
        maintenanceTask = nil
        ensureMaintenance()
    }

    func ensureMaintenance() {
        guard maintenanceTask == nil, !isInBackground else { return }
        maintenanceTask = Task { await self.runMaintenance() }
    }

    /// The heartbeat loop: sleeps on the injected clock, then checks the session (check-only), retries
    /// storage and the anonymous session, and flushes offline sign-outs. Transient failures back off
    /// exponentially with jitter; after `maxAttempts` the normal interval resumes.
    private func runMaintenance() async {
        var failures = 0
        var retryAfter: Duration?
        while !Task.isCancelled {
            let delay = nextDelay(failures: failures, retryAfter: retryAfter)
            do {
                try await clock.sleep(for: delay)
            } catch {
                return
            }
            if Task.isCancelled { return }
            tasksUnderWay += 1
            let outcome = await tick()
            tasksUnderWay -= 1
            switch outcome {
            case .done:
                failures = 0
                retryAfter = nil
            case .transientFailure(let after):
                failures += 1
                retryAfter = after
                if failures > configuration.backoff.maxAttempts {
                    failures = 0
                    retryAfter = nil
                }
            }
        }
    }

    /// The delay before the next tick.
    func nextDelay(failures: Int, retryAfter: Duration?) -> Duration {
        if let state, state.session == nil, autoEstablish, reestablishTask == nil {
            return establishRetryDelay(retryAfter: retryAfter)
        }
        if failures > 0 {
            let backoff = configuration.backoff.delay(attempt: failures - 1, random: configuration.random())
            if let retryAfter, retryAfter > backoff { return retryAfter }
            return backoff
        }
        guard let state else { return configuration.backoff.delay(attempt: 0, random: configuration.random()) }
        let interval = jitteredHeartbeatInterval()
        guard let current = state.session else { return interval }
        let last = max(current.lastValidatedAt, lastHeartbeatAttemptAt ?? current.lastValidatedAt)
        let due = last.addingTimeInterval(interval.timeInterval)
        let wait = due.timeIntervalSince(clock.now())
        return wait > 0 ? .milliseconds(Int64((wait * 1000).rounded())) : .zero
    }

    /// The delay before the next attempt to create an anonymous session: soon for the first one, with
    /// exponential backoff after transient failures, and the heartbeat interval after a permanent failure or
    /// once `maxAttempts` retries failed. The count of failures in a row is kept across those cycles (a
    /// wrong publishable key is not retried every few seconds forever).
    func establishRetryDelay(retryAfter: Duration?) -> Duration {
        let delay: Duration
        if establishFailures == 0 {
            delay = configuration.backoff.delay(attempt: 0, random: configuration.random())
        } else if establishFailureIsPermanent || establishFailures > configuration.backoff.maxAttempts {
            delay = jitteredHeartbeatInterval()
        } else {
            delay = configuration.backoff.delay(attempt: establishFailures - 1, random: configuration.random())
        }
        if let retryAfter, retryAfter > delay { return retryAfter }
        return delay
    }

    /// The heartbeat interval with ±jitter: `interval × (1 + jitter × (2r − 1))`, r in 0 ..< 1.
    func jitteredHeartbeatInterval() -> Duration {
        let factor = 1 + configuration.heartbeatJitter * (2 * configuration.random() - 1)
        return .milliseconds(Int64((configuration.heartbeatInterval.timeInterval * factor * 1000).rounded()))
    }

    /// One heartbeat.
    func tick() async -> TickOutcome {
        lastHeartbeatAttemptAt = clock.now()
        if needsPersist { persist() }
        if state == nil {
            do {
                try await start()
                return .done
            } catch {
                let error = TesseraError.wrapping(error)
                return error.isTransient ? .transientFailure(retryAfter: error.retryAfter) : .done
            }
        }
        if let reestablishTask {
            await reestablishTask.value
            return .done
        }
        await flushPendingRevocations()
        guard let current = state?.session else {
            guard autoEstablish else { return .done }
            do {
                _ = try await establishSession()
                return .done
            } catch {
                let error = TesseraError.wrapping(error)
                log(.warning, "anonymous session not created: \(error.code)")
                return error.isTransient ? .transientFailure(retryAfter: error.retryAfter) : .done
            }
        }
        if current.session.expiresAt <= serverNow(current) {
            endSession(.expired, token: current.token)
            return .done
        }
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
        let key = AuthenticateFlightKey(
            generation: generation, durationMinutes: durationMinutes, sessionToken: current.token)
        if let flight = authenticateFlights[key] {
            noteJoin()
            return try await flight.value
        }
        let task = Task { try await self.performAuthenticate(key) }
        authenticateFlights[key] = task
        return try await task.value
    }

    private func performAuthenticate(_ key: AuthenticateFlightKey) async throws -> StoredSession {
        defer { authenticateFlights[key] = nil }
        do {
            let envelope = try await api.authenticate(
                sessionToken: key.sessionToken, durationMinutes: key.durationMinutes)
            try check(key.generation)
            guard state?.session?.token == key.sessionToken else {
                throw TesseraError(.superseded, message: "The session changed while it was being checked.")
            }
            return apply(envelope)
        } catch let error as TesseraError where error.endsSession {
            if key.generation == generation {
                endSession(error.code == .sessionExpired ? .expired : .revoked, token: key.sessionToken)
            }
            throw error
        }
    }

    /// `POST /v1/sessions/anonymous` for this installation; concurrent callers share one request.
    /// A consumed installation (merged into a user) is replaced by a fresh one first.
    func establishSession() async throws -> StoredSession {
        if let flight = establishFlight, flight.generation == generation {
            noteJoin()
            return try await flight.task.value
        }
        let gen = generation
        tasksUnderWay += 1
        let task = Task {
            defer { self.tasksUnderWay -= 1 }
            do {
                return try await self.performEstablish(generation: gen)
            } catch {
                self.noteEstablishFailure(TesseraError.wrapping(error))
                throw error
            }
        }
        establishFlight = (gen, task)
        defer { if establishFlight?.generation == gen { establishFlight = nil } }
        return try await task.value
    }

    /// Counts a failed anonymous session; a permanent one (not transient, not cancelled or overtaken)
    /// is published for the app to act on.
    private func noteEstablishFailure(_ error: TesseraError) {
        guard error.code != .superseded, error.code != .cancelled else { return }
        establishFailures += 1
        establishFailureIsPermanent = !error.isTransient
        if establishFailureIsPermanent {
            log(.error, "anonymous session refused (\(error.code)); retrying once per heartbeat interval")
            eventBroadcaster.publish(.anonymousSessionFailed(error, attempts: establishFailures))
        }
    }

    private func performEstablish(generation gen: UInt64) async throws -> StoredSession {
        guard state != nil else { throw TesseraError(.storageUnavailable) }
        if state?.installationConsumed == true {
            state?.rotateInstallation()
            persist()
        }
        for attempt in 0..<2 {
            guard let current = state else { break }
            let body = AnonymousRequest(
                installationID: current.installationID.uuidString.lowercased(),
                installationSecret: current.installationSecret)
            do {
                let envelope = try await api.createAnonymousSession(body)
                if gen != generation { await abandon(sessionToken: envelope.sessionToken) }
                try check(gen)
                if let established = state?.session {
                    // An identify (with the publishable key) answered first: its session stays, this one ends.
                    await abandon(sessionToken: envelope.sessionToken)
                    return established
                }
                return apply(envelope)
            } catch {
                guard error.code == .installationConflict, attempt == 0 else { throw error }
                // Another secret owns this installation ID: never fight for it, take a new one.
                try check(gen)
                log(.warning, "installation conflict: starting a new installation")
                state?.rotateInstallation()
                persist()
            }
        }
        throw TesseraError(.installationConflict, message: "The installation ID is taken.")
    }
}
