public import Foundation
import TesseraTokens

/// The Tessera client: an anonymous identity per installation from the first launch, signed identity
/// when the user signs in, a session kept alive by a heartbeat, push tokens, and an ordered sign-out.
///
/// ```swift
/// let tessera = TesseraClient(configuration: TesseraConfiguration(
///     serverURL: URL(string: "https://id.example.com")!,
///     publishableKey: "pk_…"))
/// try await tessera.start()                       // anonymous session, restored or created
/// for await state in tessera.sessionUpdates { … } // available / unavailable(reason)
/// let capabilities = try await tessera.identify(signedIdentityToken: tokenFromMyBackend)
/// try await tessera.signOut()                     // unregister push → revoke → clear → fresh anonymous
/// ```
///
/// Every identify, sign-out and reset starts a new *generation*: an answer that began under an older
/// generation is dropped, whatever order the network delivers it in. Concurrent callers that need the
/// same request (authenticate, the anonymous session) share one. Only `session_not_found`,
/// `session_expired` and `session_revoked` end a session; offline, timeouts, 5xx and 429 keep it and
/// are retried with exponential backoff and jitter.
public actor TesseraClient {
    /// The configuration the client was created with.
    public nonisolated let configuration: TesseraConfiguration

    let api: APIClient
    /// The device key, the server's nonce and clock: shared with ``api``, which signs every request.
    let proofs: DeviceProofs
    /// The App Attest state machine: attests, asserts, reports ``appAttestStatus``.
    let appAttestation: AppAttestation
    /// The quiet re-establishment of a session bound to a device key that is gone, while one runs.
    var keyRecoveryTask: Task<Void, Never>?
    let clock: any TesseraClock
    let store: any CredentialStore
    let sessionBroadcaster = StateBroadcaster<Availability<Session>>(.unavailable(.neverSignedIn))
    let profileBroadcaster = StateBroadcaster<Availability<Profile>>(.unavailable(.neverSignedIn))
    let eventBroadcaster = EventBroadcaster<TesseraEvent>()
    /// The current session's credentials, for the synchronous getters; set by every ``publishCurrent()``.
    let cachedCredentials = Locked<SessionTokens?>(nil)
    /// Asked for identity tokens; starts as the configuration's, replaced by ``setIdentityTokenProvider(_:)``.
    var identityTokenProvider: (any IdentityTokenProvider)?

    // The concurrency rules live in three internal values this actor owns, each unit-tested on its own:
    // `ledger` decides what the state becomes, `work` shares requests, `heartbeat` schedules. The actor
    // runs the tasks, talks to the server, persists and publishes.

    /// The state, the generations that order the calls changing it, and the end of the local session.
    var ledger = SessionLedger()
    /// Shared requests and the client's own tasks.
    var work = ClientWork()
    /// The heartbeat's loop, schedule, backoff and re-establishments.
    var heartbeat = Heartbeat()
    var isStarted = false
    var needsPersist = false
    var lifecycleObservation: LifecycleObservation?
    /// The ``InstallationMarker`` ID of this installation of the app, once read or written.
    var installationMarkerID: String?

    /// The loaded state; nil until the store was read (kept by the ``ledger``).
    var state: PersistedState? {
        get { ledger.state }
        set { ledger.state = newValue }
    }

    /// Creates a client. Nothing happens until ``start()``.
    /// - Parameter configuration: The configuration.
    public init(configuration: TesseraConfiguration) {
        self.configuration = configuration
        let proofs = DeviceProofs(configuration: configuration)
        self.proofs = proofs
        self.api = APIClient(configuration: configuration, proofs: proofs)
        self.appAttestation = AppAttestation(configuration: configuration)
        self.clock = configuration.clock
        self.store = configuration.credentialStore
        self.identityTokenProvider = configuration.identityTokenProvider
    }

    // MARK: Observing

    /// The current session state, and every change after it. Each new subscriber gets the current state first.
    public nonisolated var sessionUpdates: AsyncStream<Availability<Session>> { sessionBroadcaster.stream() }
    /// The current profile state, and every change after it. Each new subscriber gets the current state first.
    public nonisolated var profileUpdates: AsyncStream<Availability<Profile>> { profileBroadcaster.stream() }
    /// Events from now on: identified, authentication failed, session ended, storage corrupted, signed out, reset.
    public nonisolated var events: AsyncStream<TesseraEvent> { eventBroadcaster.stream() }
    /// The session state now.
    public nonisolated var sessionState: Availability<Session> { sessionBroadcaster.current }
    /// The profile state now.
    public nonisolated var profileState: Availability<Profile> { profileBroadcaster.current }

    // MARK: Reading

    /// The current profile, if there is a session.
    public var profile: Profile? { state?.session?.profile }
    /// The capabilities of the current session, if any.
    public var capabilities: Capabilities? { state?.session?.capabilities }
    /// This installation's public ID, once the store was read.
    public var installationID: UUID? { state?.installationID }
    /// The push token registration, if any.
    public var registeredDevice: Device? { state?.device?.device }

    /// A UUID for StoreKit's `appAccountToken`: the user ID when it parses as a UUID, else the
    /// installation UUID. Nil only before the store was read.
    public var appAccountToken: UUID? {
        if let externalID = state?.session?.profile.externalID, let uuid = UUID(uuidString: externalID) {
            return uuid
        }
        return state?.installationID
    }

    /// The sessions namespace: authenticate, revoke, hydrate, list.
    public nonisolated var sessions: Sessions { Sessions(client: self) }

    // MARK: Start

    /// Creates or restores the installation's anonymous identity, restores a persisted session (the
    /// heartbeat validates it when it is older than one interval), and starts the heartbeat.
    ///
    /// Idempotent; concurrent calls share one run. Throws `invalid_configuration` (nothing starts) when
    /// the configuration cannot work (see ``TesseraConfiguration/validate()``), `storage_unavailable`
    /// when the store cannot be read now (the SDK retries by itself and never creates a new identity
    /// meanwhile), or the error of the first anonymous session (retried with backoff when transient,
    /// once per heartbeat interval otherwise: see ``TesseraEvent/anonymousSessionFailed(_:attempts:)``).
    public func start() async throws {
        try configuration.validate()
        if isStarted { return }
        let key = ClientWork.StartKey()
        if let flight = work.join(\.start, key) {
            return try await flight.value
        }
        work.taskBegan()
        let task = Task { try await self.performStart() }
        work.start.begin(key, task)
        defer { work.start.end(key) }
        try await task.value
    }

    private func performStart() async throws {
        defer { work.taskEnded() }
        // Observed before the store is read: "protected data available" retries an unavailable store.
        if configuration.observesApplicationLifecycle, lifecycleObservation == nil {
            lifecycleObservation = await LifecycleObservation.install(client: self)
        }
        if state == nil {
            do throws(TesseraError) {
                try loadState()
            } catch {
                // Retried by the heartbeat, unless retrying cannot help (then on the next foreground).
                if error.code == .storageMisconfigured || error.code == .storageAccessDenied {
                    stopRetryingStorage()
                } else {
                    ensureMaintenance()
                }
                throw error
            }
        }
        // The heartbeat starts once this run is over, whatever its outcome (it retries what failed).
        defer { ensureMaintenance() }
        if let installationID = state?.installationID {
            appAttestation.noteInstallation(installationID.uuidString.lowercased())
        }
        // The device key before any request; a session bound to a key that is gone is re-established
        // now, quietly, within this start.
        try loadDeviceKey()
        await recoverFromKeyLoss()
        // Revocations an offline sign-out (or a reset, a dropped answer) left queued go now, beside the
        // session below, not at the first heartbeat an interval later: until then the signed-out user's
        // session and push token stay alive on the server.
        if state?.pendingRevocations.isEmpty == false, !heartbeat.isFlushingAtStart {
            heartbeat.isFlushingAtStart = true
            work.taskBegan()
            Task {
                await self.flushPendingRevocations()
                self.heartbeat.isFlushingAtStart = false
                self.work.taskEnded()
            }
        }
        // A session that looks expired by the device clock is not ended here: the clock may be wrong (users
        // move the date), and only the server's `session_expired` ends it. The heartbeat asks at once
        // (its last check is older than one interval by that clock).
        if let provider = identityTokenProvider, state?.session?.profile.kind != .identified,
            heartbeat.reestablishTask == nil
        {
            await signInKnownUser(with: provider)
        }
        if state?.session == nil, heartbeat.autoEstablish {
            if let reestablishTask = heartbeat.reestablishTask {
                await reestablishTask.value
            } else {
                _ = try await establishSession()
            }
        }
        isStarted = true
    }

    // MARK: State

    /// Server time now, from the last answer's `server_time`: an estimate that the device clock moves
    /// with it, for choosing when to refresh a JWT; never used to end a session.
    func serverNow(_ session: StoredSession) -> Date {
        clock.now().addingTimeInterval(session.serverTimeOffset)
    }

    /// Makes an envelope the current session, persists and publishes it.
    @discardableResult
    func apply(_ envelope: SessionEnvelope) -> StoredSession {
        let now = clock.now()
        let jwtExpiry =
            (try? SessionClaims.unverified(from: envelope.sessionJWT).expiration)
            ?? envelope.serverTime.addingTimeInterval(300)
        let stored = StoredSession(
            session: envelope.session, profile: envelope.profile, capabilities: envelope.capabilities,
            token: envelope.sessionToken, jwt: envelope.sessionJWT, jwtExpiresAt: jwtExpiry, lastValidatedAt: now,
            serverTimeOffset: envelope.serverTime.timeIntervalSince(now))
        if state == nil { state = .freshInstallation() }
        state?.session = stored
        state?.lastEndReason = nil
        if stored.capabilities.kind != .anonymous { state?.installationConsumed = true }
        heartbeat.lastAttemptAt = now
        heartbeat.establishSucceeded()
        persist()
        publishCurrent()
        return stored
    }

    /// Ends the current session locally (when `token` is still the current one) because the server ended
    /// it, publishes why, and re-establishes in the background: through the identity-token provider for a
    /// verified session, else (or when it gives nothing) a fresh anonymous identity, as the fallback policy
    /// says. An identify, sign-out or hydration under way resolves it instead.
    func endSession(_ reason: UnavailableReason, token: String) {
        // Another client of the store may have replaced the session already: then that one is current.
        syncWithStore()
        guard let current = state?.session, current.token == token else { return }
        if ledger.identityOperations > 0 { return }
        let gen = ledger.advance()
        // The server dropped the push token with the session: kept here, to bind it to the session that
        // replaces this one when it is the same profile's (a silent re-sign-in after a revoke).
        let carried = state?.device.flatMap { $0.sessionToken == token ? $0 : nil }
        guard let ended = endLocalSession(reason, pushTokens: .boundToEndedSession) else { return }
        log(.info, "session \(ended.session.id) ended: \(reason.rawValue)")
        eventBroadcaster.publish(.sessionEnded(reason))
        let request: IdentityTokenRequest? =
            ended.capabilities.kind == .verified
            ? IdentityTokenRequest(externalUserID: ended.profile.externalID, reason: reason) : nil
        work.taskBegan()
        heartbeat.beginReestablishment { serial in
            Task {
                await self.reestablish(
                    after: request, carrying: carried.map { (device: $0, profileID: ended.profile.id) },
                    generation: gen,
                    serial: serial)
            }
        }
    }

    /// Ends the local session (see ``SessionLedger/endSession(_:keeping:pushTokens:queueing:consumesInstallation:)``),
    /// then persists and publishes the state.
    @discardableResult
    func endLocalSession(
        _ reason: UnavailableReason, pushTokens: SessionLedger.PushTokenRule,
        queueing revocations: [PendingRevocation] = [], consumesInstallation: Bool = false
    ) -> StoredSession? {
        let ended = ledger.endSession(
            reason, pushTokens: pushTokens, queueing: revocations, consumesInstallation: consumesInstallation)
        persist()
        publishCurrent()
        return ended
    }

    private func reestablish(
        after request: IdentityTokenRequest?, carrying device: (device: StoredDevice, profileID: String)?,
        generation gen: UInt64,
        serial: UInt64
    ) async {
        // Cleared when this run ends, whatever overtook it: a finished task left here would make every
        // later heartbeat wait for it and return before checking the session.
        defer {
            heartbeat.reestablishmentEnded(serial: serial)
            work.taskEnded()
        }
        if let request, let provider = identityTokenProvider {
            do {
                guard let token = try await identityToken(from: provider, for: request) else {
                    throw TesseraError(.identityTokenUnavailable, message: "The identity-token provider gave no token.")
                }
                guard ledger.isCurrent(gen) else { return }
                _ = try await performIdentify(.signed(token), generation: gen)
                await carryOver(device, generation: gen)
                return
            } catch {
                let error = TesseraError.wrapping(error)
                if error.code == .superseded || !ledger.isCurrent(gen) { return }
                log(.warning, "re-establishing the verified session failed: \(error.code)")
                eventBroadcaster.publish(.authenticationFailed(error))
            }
        }
        guard ledger.isCurrent(gen) else { return }
        guard configuration.fallbackPolicy == .anonymous else {
            heartbeat.autoEstablish = false
            return
        }
        do {
            _ = try await establishSession()
            await carryOver(device, generation: gen)
        } catch {
            log(.warning, "anonymous fallback failed: \(TesseraError.wrapping(error).code); retrying later")
            heartbeat.reestablishmentEnded(serial: serial)
            rescheduleMaintenance()
        }
    }

    /// Binds the push token of a session that ended to the session that replaced it, when that is the
    /// same profile's (the server dropped it with the ended session; nothing else will bring it back). On
    /// failure ``TesseraEvent/deviceRegistrationLost(pushToken:)`` tells the app to register it again.
    private func carryOver(_ carried: (device: StoredDevice, profileID: String)?, generation gen: UInt64) async {
        guard let carried, ledger.isCurrent(gen), state?.device == nil,
            let current = state?.session, current.profile.id == carried.profileID
        else { return }
        let device = carried.device
        do {
            _ = try await registerDeviceToken(
                device.pushToken, platform: device.device.platform, environment: device.device.environment)
            log(.info, "push token moved to the re-established session")
        } catch {
            log(
                .warning,
                "could not move the push token to the re-established session: \(TesseraError.wrapping(error).code)")
            eventBroadcaster.publish(.deviceRegistrationLost(pushToken: device.pushToken))
        }
    }

    /// Publishes the current session and profile states (repeats are swallowed by the broadcasters).
    func publishCurrent() {
        cachedCredentials.withLock { cached in
            cached = state?.session.map { SessionTokens(sessionToken: $0.token, sessionJWT: $0.jwt) }
        }
        if let current = state?.session {
            sessionBroadcaster.publish(.available(current.session, lastValidatedAt: current.lastValidatedAt))
            profileBroadcaster.publish(.available(current.profile, lastValidatedAt: current.lastValidatedAt))
        } else {
            let reason = state?.lastEndReason ?? .neverSignedIn
            sessionBroadcaster.publish(.unavailable(reason))
            profileBroadcaster.publish(.unavailable(reason))
        }
    }

    /// Writes the state to the store, merged into what another client of the store (an app's extension)
    /// wrote since this one last read or wrote it: under the store's exclusive access, the stored value is
    /// read again, the changes this client made are merged into it (``StateMerge``), and the result is
    /// written and becomes this client's state. On failure the state stays in memory and is written on
    /// the next heartbeat.
    func persist() {
        do {
            try persistMerged()
        } catch {
            needsPersist = true
            log(.warning, "could not persist the state (\(error)); will retry")
        }
    }

    /// ``persist()`` that throws when the store cannot be read or written now (the state stays in memory).
    func persistMerged() throws(CredentialStoreError) {
        guard var mine = state else { return }
        if mine.installMarker == nil { mine.installMarker = installationMarkerID }
        let key = configuration.storageKey
        let store = self.store
        let base = ledger.stored
        let (merged, theirs) = try store.withExclusiveAccess(to: key) {
            () throws(CredentialStoreError) -> (PersistedState, PersistedState?) in
            let theirs = try store.load(key).flatMap(Self.decodeState)
            let merged = StateMerge.merge(base: base, mine: mine, theirs: theirs)
            if merged != theirs {
                let data: Data
                do { data = try WireCoding.encoder().encode(merged) } catch {
                    throw .unavailable("the state cannot be encoded")
                }
                try store.save(data, for: key)
            }
            return (merged, theirs)
        }
        needsPersist = false
        adoptStored(merged)
        // The session that lost the merge (this client's or the other's) must not stay alive: revoked now.
        let losers = merged.pendingRevocations.filter {
            !mine.pendingRevocations.contains($0) && theirs?.pendingRevocations.contains($0) != true
        }
        if !losers.isEmpty {
            work.taskBegan()
            Task {
                for item in losers { await self.flush(item) }
                self.work.taskEnded()
            }
        }
    }

    /// Reads the store again and merges what another client of it wrote since (see ``persist()``): at
    /// each heartbeat, when the app comes to the foreground, before each call that changes the session,
    /// and before a session the server ended is replaced.
    func syncWithStore() {
        guard state != nil else { return }
        if needsPersist { return persist() }
        guard let data = try? store.load(configuration.storageKey), let theirs = Self.decodeState(data),
            theirs != ledger.stored
        else { return }
        persist()
    }

    /// Makes `merged`, just read or written, the base of the next merge and this client's state;
    /// publishes it when another client's changes came in with it.
    private func adoptStored(_ merged: PersistedState) {
        ledger.stored = merged
        guard state != merged else { return }
        if state?.session?.token != merged.session?.token {
            log(.info, "another client of the store changed the session")
        }
        state = merged
        // Another client of the store (an extension) may have replaced the device key and bound a new
        // session to it: the key is read again from the store before the next proof.
        if let session = merged.session, isBoundToAnotherKey(session) { proofs.forgetKey() }
        publishCurrent()
    }

    /// Throws `superseded` when a newer identify, sign-out or reset started since `gen`.
    func check(_ gen: UInt64) throws(TesseraError) {
        try ledger.check(gen)
    }

    /// Loads the state if needed (starting the client). Once the state is loaded, a start that failed
    /// otherwise (its anonymous session overtaken by a reset, or offline) does not fail the caller, which
    /// needs the state, not that session.
    func requireState() async throws -> PersistedState {
        syncWithStore()
        if let state { return state }
        do {
            try await start()
        } catch {
            guard let state else { throw error }
            return state
        }
        guard let state else { throw TesseraError(.storageUnavailable) }
        return state
    }

    func log(_ level: TesseraLogMessage.Level, _ message: String) {
        configuration.logHandler(TesseraLogMessage(level: level, message: message))
    }
}
