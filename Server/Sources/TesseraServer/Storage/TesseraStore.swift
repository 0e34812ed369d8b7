/// Everything the server keeps, behind one protocol, so a database can be swapped without touching
/// the routes.
///
/// Every method is one atomic unit: a backend runs each write in one transaction and returns only
/// after it committed. Times are Unix seconds. Every failure is thrown as a ``CoreError``: a
/// domain failure with its code (for example `installation_conflict`), and a database that cannot
/// answer as ``CoreError/unavailable``, whichever the backend.
public protocol TesseraStore: SchemaStore, SealedCellStore {
    /// Answers when the database answers (`/health`).
    func ping() async throws
    /// The latest schema version recorded in the database (0 before the first migration), which
    /// `GET /health/ready` compares with ``TesseraRelease/schemaVersion``.
    func schemaVersion() async throws -> Int64
    /// Releases connections and stops background threads.
    func close() async throws

    // MARK: Projects

    func createProject(_ project: NewProject) async throws -> ProjectRecord
    func projectCount() async throws -> Int
    /// Every project, oldest first (`tessera projects list`).
    func allProjects() async throws -> [ProjectRecord]
    func project(id: String) async throws -> ProjectRecord?
    func project(publishableKeyHash: [UInt8]) async throws -> ProjectRecord?
    func project(secretKeyHash: [UInt8]) async throws -> ProjectRecord?
    /// Changes the settings of the project as its locked row holds them: `change` is given the locked
    /// project and answers its new settings (an error it throws is thrown, nothing written); nil when
    /// the project does not exist. `project.updated` lists what changed against the locked row.
    func updateProjectSettings(
        projectID: String, now: Int64, origin: EventOrigin,
        change: @escaping @Sendable (ProjectRecord) throws -> ProjectSettings
    ) async throws -> ProjectRecord?
    func identitySecrets(projectID: String) async throws -> [IdentitySecretRecord]
    /// Adds a secret unless the project already has `limit` (`identity_secret_limit_reached`).
    func addIdentitySecret(projectID: String, secret: IdentitySecretRecord, limit: Int, origin: EventOrigin)
        async throws
    /// Deletes a secret; false when unknown; `last_identity_secret` for the only one.
    func deleteIdentitySecret(projectID: String, kid: String, now: Int64, origin: EventOrigin) async throws -> Bool
    /// The signing keys: the current one (not retired) and retired ones.
    func sessionKeys(projectID: String) async throws -> [SessionKeyRecord]
    /// Retires the current signing key at `now` and makes `newKey` current.
    func rotateSessionKey(projectID: String, newKey: SessionKeyRecord, now: Int64, origin: EventOrigin) async throws

    // MARK: Sessions

    func startAnonymousSession(_ request: AnonymousStart) async throws -> AnonymousStartResult
    func identify(_ command: IdentifyCommand) async throws -> IdentifyResult
    /// The session (alive or not) whose token hashes to `tokenHash`, with its profile.
    func sessionContext(tokenHash: [UInt8]) async throws -> SessionContext?
    /// ``sessionContext(tokenHash:)`` read on the caller's thread, when this store reads without
    /// suspending (SQLite); `.none` when it cannot (PostgreSQL), and the caller awaits the other.
    ///
    /// The heartbeat's lookup: answered here, it needs no task frame of its own.
    func sessionContextWithoutSuspending(tokenHash: [UInt8]) throws -> SessionContext??
    /// The session (alive or not) with this ID, with its profile.
    func sessionContext(sessionID: String) async throws -> SessionContext?
    /// Sets `expires_at = max(expires_at, expiresAt)` if the session is alive at `now`, in one
    /// conditional update; nil when it was not alive.
    func extendSession(sessionID: String, expiresAt: Int64, now: Int64) async throws -> SessionContext?
    /// Revokes a live session of `profileID` (any profile when nil) and deletes its devices
    /// (`session.ended` with `reason`).
    func revokeSession(sessionID: String, profileID: String?, now: Int64, reason: SessionEndReason, origin: EventOrigin)
        async throws -> Bool
    /// Revokes `sessionID`, a live session of the profile of the live session `callerSessionID`, and
    /// deletes its devices (`session.ended` with `reason`), deciding both from the rows as locked in
    /// one transaction; nil when the caller's session is not alive (nothing written), false when
    /// `sessionID` is not a live session of the caller's profile.
    func revokeSession(
        sessionID: String, callerSessionID: String, now: Int64, reason: SessionEndReason, origin: EventOrigin
    ) async throws -> Bool?
    /// Revokes every live session of a profile (by ID or alias, resolved in the same transaction)
    /// and deletes their devices (`session.ended`, reason `admin`); returns how many, nil when the
    /// profile is unknown (nothing written).
    func revokeSessions(projectID: String, profileID: String, now: Int64, origin: EventOrigin) async throws -> Int?
    /// Revokes every other live session of the profile of the live session `sessionID` and deletes
    /// their devices (`session.ended`, reason `revoked`); returns how many, nil when `sessionID` is
    /// not alive at `now` (nothing written).
    func revokeOtherSessions(sessionID: String, now: Int64, origin: EventOrigin) async throws -> Int?
    func liveSessions(profileID: String, now: Int64) async throws -> [SessionRecord]
    /// At most `limit` live sessions of a profile, the newest first, and how many it has (the
    /// console: a profile may hold thousands).
    func newestLiveSessions(profileID: String, now: Int64, limit: Int) async throws -> (
        sessions: [SessionRecord], count: Int
    )

    /// Records the `jti` of a DPoP proof signed by the key `jkt` as used until `expiresAt`, in one
    /// atomic insert that every node shares; false (nothing changed) when it was used already: a replay.
    func useDPoPProof(jkt: String, jti: String, expiresAt: Int64) async throws -> Bool

    // MARK: App Attest

    /// Stores an App Attest challenge (its SHA-256) for the project until `expiresAt`.
    func createAppAttestChallenge(projectID: String, challengeHash: [UInt8], expiresAt: Int64) async throws
    /// Spends a challenge of the project in one atomic delete that every node shares: ``AppAttestChallengeSpend/spent``
    /// once, when it was stored and not expired at `now`; ``AppAttestChallengeSpend/expired`` (deleted) when it
    /// expired; ``AppAttestChallengeSpend/unknown`` (nothing changed) when never stored or already spent.
    func consumeAppAttestChallenge(projectID: String, challengeHash: [UInt8], now: Int64) async throws
        -> AppAttestChallengeSpend
    /// Whether the installation exists, and its recorded App Attest verdict and key.
    func appAttestState(projectID: String, installationID: String) async throws -> AppAttestState
    /// Raises the installation's counter to `counter` if its stored key is `keyID` and its stored
    /// counter is below `counter`, decided on the locked row; false (nothing changed) otherwise, so
    /// an assertion replayed on any node is refused.
    func advanceAppAttestCounter(projectID: String, installationID: String, keyID: [UInt8], counter: Int64)
        async throws -> Bool
    /// Records an installation's verdict (and its key, when ``AppAttestVerdictWrite/replacesKey``).
    func recordAppAttestVerdict(_ write: AppAttestVerdictWrite) async throws
    /// The recorded App Attest state of these installations of the project (unknown ones left out).
    func appAttestRecords(projectID: String, installationIDs: [String]) async throws -> [AppAttestRecord]
    /// The installations a profile holds (live or previous), oldest first.
    func installationIDs(projectID: String, profileID: String) async throws -> [String]
    /// How many of the project's installations have each verdict label (`attested`, `unattested`,
    /// `failed`, `unsupported`), and how many of them `enforce` would have refused.
    func appAttestCounts(projectID: String) async throws -> AppAttestCounts

    // MARK: Activity (daily, weekly and monthly actives; tallies per day)

    /// Records profiles seen active and adds tallies to their days; a mark already recorded changes
    /// nothing (`INSERT … ON CONFLICT DO NOTHING`).
    func recordActivity(_ marks: [ActivityMark], tallies: [ActivityTally]) async throws
    /// The project's activity from `firstDay` to `today` (both included) and the 1, 7 and 30-day
    /// windows ending `today`.
    func activitySummary(projectID: String, firstDay: Int64, today: Int64) async throws -> ActivitySummary
    /// Deletes the activity rows, counts and tallies of days before `day`, up to `batchSize` rows of
    /// each table; answers the most it deleted from one table.
    func deleteActivity(before day: Int64, batchSize: Int) async throws -> Int
    /// Counts one more chunk (at most `chunkRows` rows of one day) of the activity written before
    /// schema 18 (`activity_backfill`), in one write transaction; false when every such day is counted.
    func backfillActivity(chunkRows: Int) async throws -> Bool

    // MARK: Devices

    /// Binds a push token to a session, moving it from any other session of the project.
    func registerDevice(_ device: DeviceRecord, origin: EventOrigin) async throws -> DeviceRecord
    func deleteDevice(deviceID: String, profileID: String, now: Int64, origin: EventOrigin) async throws -> Bool
    /// Removes a device of the profile of the live session `callerSessionID` (only one registered by
    /// that session when `ownSessionOnly`), deciding from the rows as locked in one transaction; nil
    /// when the caller's session is not alive (nothing written), false when no such device.
    func deleteDevice(deviceID: String, callerSessionID: String, ownSessionOnly: Bool, now: Int64, origin: EventOrigin)
        async throws -> Bool?
    func liveDevices(profileID: String, now: Int64) async throws -> [DeviceRecord]

    // MARK: Admin

    /// The profile with this ID or alias, within the project.
    func profile(projectID: String, id: String) async throws -> ProfileRecord?
    func profiles(projectID: String, externalID: String) async throws -> [ProfileRecord]
    /// Erases a profile (by ID or alias) with its aliases, sessions and devices, and removes its
    /// personal data from its earlier events.
    func eraseProfile(projectID: String, profileID: String, now: Int64, origin: EventOrigin) async throws -> Bool

    // MARK: Console queries

    /// One page of the project's profiles matching `query`, newest first (`id DESC`), at most
    /// `query.limit`; each filter is served by an index, so no page reads the whole table.
    func profiles(_ query: ProfileQuery) async throws -> [ProfileRecord]
    /// How many profiles match `query` (its cursor and limit ignored), counting no further than
    /// `cap + 1`: an answer above `cap` means "more than `cap`". It reads what `cap + 1` rows of the
    /// list would, through the same indexes.
    func countProfiles(_ query: ProfileQuery, cap: Int) async throws -> Int
    /// The profile an identifier names, nil when none: `usr_…` (an ID or an alias), `ses_…` (the
    /// profile of a session still stored, live or ended), `dev_…` (a device's profile), an
    /// installation UUID (the profile its installation holds), an external ID (the verified profile
    /// first, then the unverified one) or an email (the newest profile with it).
    func lookupProfile(projectID: String, identifier: String) async throws -> ProfileRecord?
    /// The profiles merged into `profileID` (an ID or an alias), oldest merge first; empty when
    /// unknown.
    func aliases(projectID: String, profileID: String) async throws -> [ProfileAliasRecord]
    /// The stored sessions (live or ended) with these IDs in the project, in the order of `ids`;
    /// unknown IDs are left out.
    func sessions(projectID: String, ids: [String]) async throws -> [SessionRecord]
    /// Sets each session's last client (address and user agent), writing only the rows that hold
    /// another one; unknown sessions are left out. Answers how many rows it wrote.
    @discardableResult
    func recordSessionClients(_ clients: [(sessionID: String, client: SessionClient)]) async throws -> Int
    /// The last clients of the sessions with these IDs, by ID (sessions with none recorded are left out).
    func sessionClients(ids: [String]) async throws -> [String: SessionClient]
    /// The overview's counts at `now`, from indexes (no full table scan), but still proportional to
    /// the project: on SQLite with 1M profiles and 1M sessions (686k live), the counts by kind took
    /// about 150 ms (covering `profiles_list`), blocked 1 ms, live sessions about 240 ms (the
    /// `sessions_expires_at` range). Callers that show them on every page view cache them (60 s).
    func projectCounts(projectID: String, now: Int64) async throws -> ProjectCounts

    // MARK: Operator: blocking and API-key rotation

    /// Blocks (`blocked`, with `reason`) or unblocks a profile (by ID or alias); a block ends the
    /// profile's live sessions and deletes its devices in the same transaction. Nil when unknown.
    func setProfileBlocked(
        projectID: String, profileID: String, blocked: Bool, reason: String?, now: Int64, origin: EventOrigin
    ) async throws -> ProfileRecord?
    /// The API keys the project accepts at `now`: its current keys and the rotated-out ones in grace.
    func apiKeyHashes(projectID: String, now: Int64) async throws -> [APIKeyHashRecord]
    /// The project of a rotated-out API key still in its grace period at `now`, or nil.
    func project(retiredAPIKeyHash: [UInt8], kind: APIKeyKind, now: Int64) async throws -> ProjectRecord?
    /// Makes `newKeyHash` the project's key of `kind`; the old one stays accepted until `graceUntil`
    /// (not at all when that is not after `now`). False when the project does not exist.
    func rotateAPIKey(
        projectID: String, kind: APIKeyKind, newKeyHash: [UInt8], graceUntil: Int64, now: Int64, origin: EventOrigin
    ) async throws -> Bool

    // MARK: Webhooks

    /// Adds a webhook (`webhook.created`); its secrets are sealed.
    func createWebhook(_ webhook: WebhookRecord, origin: EventOrigin) async throws
    /// The webhook with this ID within the project, secrets opened; nil when unknown.
    func webhook(projectID: String, id: String) async throws -> WebhookRecord?
    /// Up to `limit` webhooks of the project whose ID sorts after `afterID` (from the first when
    /// nil), in ID order: one page of the list.
    func webhooks(projectID: String, afterID: String?, limit: Int) async throws -> [WebhookRecord]
    /// Applies `patch` (disabling records `now` and reason `admin`; enabling clears both, and its
    /// deliveries resume with the events committed from then on); `webhook.updated` with the names
    /// of the fields that changed, if any; nil when unknown.
    func updateWebhook(projectID: String, id: String, patch: WebhookPatch, now: Int64, origin: EventOrigin)
        async throws -> WebhookRecord?
    /// Deletes a webhook with its deliveries (`webhook.deleted`); false when unknown.
    func deleteWebhook(projectID: String, id: String, now: Int64, origin: EventOrigin) async throws -> Bool
    /// Makes `newSecret` the signing secret; the current one becomes the previous one until
    /// `previousExpiresAt` (an older previous one is dropped); `webhook.updated` (`changed: [secret]`).
    /// Nil when unknown.
    func rotateWebhookSecret(
        projectID: String, id: String, newSecret: String, previousExpiresAt: Int64, now: Int64, origin: EventOrigin
    ) async throws -> WebhookRecord?

    // MARK: Webhook deliveries

    /// Queues, for each enabled webhook, the events of its types committed after its cursor (up to
    /// `batchSize` events read for each of at most ten webhooks), due at `now`, and advances the cursor in the same
    /// transaction; returns how many events it read (0: every cursor has caught up). Several nodes
    /// may run it at once.
    func fanOutWebhookDeliveries(now: Int64, batchSize: Int) async throws -> Int
    /// Leases up to `limit` pending deliveries due at `now` of enabled webhooks, whose lease is
    /// free or expired, to `lease` until `now + leaseSeconds`: until then no other caller claims them.
    func claimWebhookDeliveries(lease: String, now: Int64, leaseSeconds: Int64, limit: Int) async throws
        -> [ClaimedWebhookDelivery]
    /// Records attempts in one transaction, each if its lease still holds (false for it otherwise,
    /// nothing changed), and adds each recorded one to the attempt log; a failure marks the webhook failing since its first failed attempt, and
    /// disables it for `result.disableReason` or when it has been failing since
    /// `result.failingDisableBefore`.
    func recordWebhookAttempts(_ results: [WebhookAttemptResult]) async throws -> [Bool]
    /// One page of a webhook's delivery log, newest first, after `cursor`.
    func webhookDeliveries(
        projectID: String, webhookID: String, state: WebhookDeliveryRecord.State?,
        before cursor: WebhookDeliveryCursor?, limit: Int
    ) async throws -> [WebhookDeliveryRecord]
    /// Queues the event again for the webhook, due at `now`, deciding in one transaction that the
    /// webhook exists; false when the feed does not hold the event, nil when the webhook is unknown.
    func replayWebhookEvent(projectID: String, webhookID: String, eventID: String, now: Int64) async throws -> Bool?
    /// Queues again every event of the webhook's types after `afterSequence`; nil when the webhook is unknown.
    func replayWebhookEvents(projectID: String, webhookID: String, afterSequence: Int64, now: Int64) async throws
        -> Int?
    /// Queues a test event (not in the feed) with its body; false when the webhook is unknown.
    func queueWebhookTest(projectID: String, webhookID: String, event: EventRecord, body: String, now: Int64)
        async throws -> Bool
    /// For each webhook with pending deliveries, when the oldest of their events was committed.
    func oldestPendingWebhookDeliveries() async throws -> [(webhookID: String, eventCreatedAt: Int64)]
    /// Deletes up to `batchSize` delivered or failed deliveries last attempted before `attemptedBefore`.
    func deleteFinishedWebhookDeliveries(attemptedBefore: Int64, batchSize: Int) async throws -> Int

    // MARK: Operators

    /// Adds an operator (not enrolled) with its enrollment; `operator_exists` when the email is taken.
    func createOperator(_ record: OperatorRecord, enrollmentTokenHash: [UInt8], enrollmentExpiresAt: Int64)
        async throws
    /// Every operator, oldest first.
    func operators() async throws -> [OperatorRecord]
    func operatorRecord(id: String) async throws -> OperatorRecord?
    /// The operator with this email (lowercased and trimmed by the caller).
    func operatorRecord(email: String) async throws -> OperatorRecord?
    /// Deletes an operator with its sessions and enrollments; false when unknown.
    func removeOperator(id: String) async throws -> Bool
    /// Replaces the operator's enrollments with this one; false when the operator is unknown.
    func replaceEnrollment(operatorID: String, tokenHash: [UInt8], expiresAt: Int64) async throws -> Bool
    /// The operator whose enrollment this is, if it has not expired at `now`.
    func enrollment(tokenHash: [UInt8], now: Int64) async throws -> OperatorRecord?
    /// Consumes a live enrollment and sets the operator's password and TOTP secret (nil: none), in one
    /// transaction; the TOTP replay step becomes `totpLastStep` (the step of the code that proved the
    /// secret, so it cannot sign in again) and the operator's sessions end. Nil when the
    /// enrollment is unknown, used or expired.
    func completeEnrollment(
        tokenHash: [UInt8], passwordHash: String, totpSecret: [UInt8]?, totpLastStep: Int64?, now: Int64
    )
        async throws -> OperatorRecord?
    func createOperatorSession(_ session: OperatorSessionRecord) async throws
    /// Records a sign-in (`last_login_at`, and `totpStep` as used) and opens its console session, in
    /// one transaction on the operator's locked row, only while the operator still exists with
    /// `passwordHash` (the hash the password was verified against) and has not used `totpStep` or a
    /// later step; otherwise writes nothing and answers why.
    func logInOperator(session: OperatorSessionRecord, passwordHash: String, totpStep: Int64?) async throws
        -> OperatorLoginOutcome
    /// The session with this token hash and its operator; nil when unknown or expired at `now`
    /// (absolute, or idle for ``OperatorSessionRecord/idleSeconds``).
    func operatorSession(tokenHash: [UInt8], now: Int64) async throws -> (OperatorSessionRecord, OperatorRecord)?
    /// Moves the session's `last_seen_at` forward to `lastSeenAt` (never back).
    func touchOperatorSession(id: String, lastSeenAt: Int64) async throws
    func deleteOperatorSession(id: String) async throws
    /// Records a login at `now` and, with a TOTP step, makes it the last accepted one, in one
    /// conditional update: false (nothing changed) when that step or a later one was already used.
    @discardableResult
    func recordOperatorLogin(id: String, now: Int64, totpStep: Int64?) async throws -> Bool
    /// Ends every session of the operator; returns how many.
    @discardableResult
    func deleteOperatorSessions(operatorID: String) async throws -> Int

    // MARK: Console (issue 25)

    /// Keeps a sealed one-time value for a console session until `expiresAt`; expired values of the
    /// session are deleted on the way.
    func saveConsoleFlash(id: String, sessionID: String, sealed: [UInt8], expiresAt: Int64, now: Int64) async throws
    /// Deletes the flash `id` of the session and answers it, unless it expired at `now`; nil when
    /// unknown, another session's, already taken or expired.
    func takeConsoleFlash(id: String, sessionID: String, now: Int64) async throws -> [UInt8]?
    /// The counters of the keys in `window`, without adding a hit (0 for a counter not there).
    func rateLimitCounts(_ keys: [RateLimitKey], window: RateLimitWindow) async throws -> [Int64]
    /// Deletes every counter of `bucket` (project `projectID`) whose key is `key` or starts with
    /// `key` followed by a space; answers how many rows went.
    @discardableResult
    func clearRateLimits(projectID: String, bucket: RateLimitKey.Bucket, key: String) async throws -> Int
    /// Records the last characters (or, for a publishable key, the whole key) of an API key.
    func saveAPIKeyHint(projectID: String, keyHash: [UInt8], hint: String) async throws
    /// The hints of the project's keys, by key hash.
    func apiKeyHints(projectID: String) async throws -> [[UInt8]: String]
    /// The latest attempts of a webhook (of one event when `eventID` is given), newest first, within
    /// the project.
    func webhookAttempts(projectID: String, webhookID: String, eventID: String?, limit: Int) async throws
        -> [WebhookAttemptRecord]
    /// Adds an entry to the audit of operator accounts.
    func appendOperatorAudit(_ entry: OperatorAuditRecord) async throws
    /// The audit of operator accounts, newest first, before the ID `before` (nil: from the newest).
    func operatorAudit(before: String?, limit: Int) async throws -> [OperatorAuditRecord]

    // MARK: Cleanup

    /// Deletes up to `batchSize` rows of each kind that ended before `now`; a session that expired
    /// without being revoked gets its `session.ended` (reason `expired`, actor the cleanup service).
    /// Expired operator enrollments and console sessions (absolute or idle) go too.
    func deleteExpired(now: Int64, batchSize: Int) async throws -> CleanupCounts
    /// Deletes up to `batchSize` rate-limit counters whose window ended by `now`, and up to
    /// `batchSize` anonymous profiles created before `anonymousCreatedBefore` (none when nil) that
    /// have no live session at `now`, with their installations, sessions, devices and aliases.
    /// Several nodes may run it at once.
    func deleteStale(now: Int64, anonymousCreatedBefore: Int64?, batchSize: Int) async throws -> CleanupCounts

    // MARK: Events

    /// The events this store committed since it opened, by type (for `/metrics`).
    var eventTally: EventTally { get }
    /// Raised after each commit of this process that wrote events or queued webhook deliveries
    /// (a replay, a test event): the webhook dispatcher waits on it instead of polling.
    var eventSignal: EventSignal { get }

    /// The feed: a project's events after `query.after`, in sequence order, at most `query.limit`.
    func events(_ query: EventQuery) async throws -> [EventRecord]
    /// The audit log: a project's events made with a secret key or by an operator that `filter`
    /// matches, newest first, those before sequence `before` when given, at most `limit`.
    func auditEvents(projectID: String, filter: AuditFilter, before: Int64?, limit: Int) async throws -> [EventRecord]
    /// A project's events newest first, those before sequence `before` when given, of one type and
    /// about one profile when given, at most `limit` (the console's recent sessions and a profile's events).
    func recentEvents(projectID: String, type: String?, profileID: String?, before: Int64?, limit: Int) async throws
        -> [EventRecord]
    /// Deletes up to `batchSize` events created before `createdBefore` (retention); returns how many.
    func deleteEvents(createdBefore: Int64, batchSize: Int) async throws -> Int

    // MARK: Sealed secrets

    // `masterKeys`, `sealedCells()` and `replaceSealedCell(_:with:)` are ``SealedCellStore``'s
    // (declared in `Secrets/`, which names no store).

    // MARK: Rate limits

    /// Adds one hit to the counter of each key in `window` (creating it) and returns each counter
    /// after the hit, in the order of `keys`. Each counter is one atomic upsert, so hits from
    /// concurrent requests and nodes are never lost.
    func hitRateLimits(_ keys: [RateLimitKey], window: RateLimitWindow) async throws -> [Int64]
}

extension TesseraStore {
    /// Reads nothing: a store that does not override it has no lookup without suspending.
    public func sessionContextWithoutSuspending(tokenHash: [UInt8]) throws -> SessionContext?? { .none }

    /// Replaces every setting of the project; nil when the project does not exist.
    func updateProjectSettings(projectID: String, settings: ProjectSettings, now: Int64, origin: EventOrigin)
        async throws -> ProjectRecord?
    {
        try await updateProjectSettings(projectID: projectID, now: now, origin: origin) { _ in settings }
    }

    /// Every audit entry, newest first (see ``auditEvents(projectID:filter:before:limit:)``).
    func auditEvents(projectID: String, before: Int64?, limit: Int) async throws -> [EventRecord] {
        try await auditEvents(projectID: projectID, filter: .all, before: before, limit: limit)
    }

    /// Records one attempt (see ``recordWebhookAttempts(_:)``).
    func recordWebhookAttempt(_ result: WebhookAttemptResult) async throws -> Bool {
        try await recordWebhookAttempts([result]).first ?? false
    }
}
