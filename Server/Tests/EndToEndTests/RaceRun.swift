import Foundation
import Synchronization

@testable import Tessera

/// One randomized run: a fresh ``TesseraClient`` on its own store and manual clock, whose transport
/// is gated by a ``RaceScheduler``; a seeded list of operations launched at seeded moments, every
/// request and response released in a seeded order; then the invariants, checked against the
/// client, its store and the live server.
struct RaceRun {
    /// What a run does to the client.
    enum Operation: CustomStringConvertible, Sendable {
        case start
        case identify(String)
        case identifyAsserted(String)
        case signOut
        case reset
        case refreshSession
        case authenticate
        case extend
        case registerDevice(String)
        case heartbeat
        case adminRevoke
        case refreshProfile
        case authorizationHeader
        case hydrate(String)
        case clearSession
        /// The app's extension launches: a second client on the same store (no identity-token provider:
        /// an extension that never signs in by itself).
        case extensionLaunch
        /// The extension checks its session (`refreshSession()`), from whatever it holds in memory.
        case extensionRefresh
        /// The device clock jumps by this many seconds (the user sets the date); the server's does not.
        case clockJump(Int)

        var description: String {
            switch self {
            case .start: "start"
            case .identify(let sub): "identify(\(sub))"
            case .identifyAsserted(let id): "identify(userID: \(id))"
            case .signOut: "signOut"
            case .reset: "reset"
            case .refreshSession: "refreshSession"
            case .authenticate: "sessions.authenticate"
            case .extend: "sessions.authenticate(extend)"
            case .registerDevice(let token): "registerDevice(\(token))"
            case .heartbeat: "heartbeat (clock +181 s)"
            case .adminRevoke: "admin revoke"
            case .refreshProfile: "refreshProfile"
            case .authorizationHeader: "authorizationHeader"
            case .hydrate(let sub): "sessions.update(tokens of \(sub))"
            case .clearSession: "clearSession"
            case .extensionLaunch: "extension: start"
            case .extensionRefresh: "extension: refreshSession"
            case .clockJump(let seconds): "device clock \(seconds > 0 ? "+" : "")\(seconds / 86_400) days"
            }
        }
    }

    /// A sign-out or reset that completed, and what the SDK held just before it.
    struct Ending: Sendable {
        var operation: String
        var tokenBefore: String?
        var userBefore: String?
    }

    /// Errors an operation may end with in a race; any other is a finding.
    static let expectedErrors: Set<TesseraError.Code> = [
        .superseded, .externalUserIDChanged, .noSession, .sessionNotFound, .sessionRevoked, .sessionExpired,
    ]

    let seed: UInt64
    let server: LiveServer
    /// Most operations in flight at once.
    var maxConcurrent = 3
    /// Real time without any event before each decision (see ``RaceScheduler/settle(quietWindow:barrier:)``).
    var quietWindow = Duration.milliseconds(1)

    /// The operations of this seed (the first of the seed's random stream, so they are stable).
    static func operations(seed: UInt64, users: [String], pushTokens: [String]) -> [Operation] {
        var random = SplitMix64(seed: seed ^ 0xA5A5_5A5A_0F0F_F0F0)
        let count = 4 + random.index(6)
        var operations: [Operation] = random.chance(0.6) ? [.start] : []
        let table: [(weight: Int, make: (inout SplitMix64) -> Operation)] = [
            (6, { .identify(users[$0.index(users.count)]) }),
            (2, { .identifyAsserted(users[$0.index(users.count)]) }),
            (4, { _ in .signOut }),
            (2, { _ in .reset }),
            (1, { _ in .refreshSession }),
            (1, { _ in .authenticate }),
            (2, { _ in .extend }),
            (4, { .registerDevice(pushTokens[$0.index(pushTokens.count)]) }),
            (3, { _ in .heartbeat }),
            (1, { _ in .adminRevoke }),
            (1, { _ in .refreshProfile }),
            (1, { _ in .authorizationHeader }),
            (1, { _ in .start }),
            (2, { .hydrate(users[$0.index(users.count)]) }),
            (2, { _ in .clearSession }),
            (2, { .clockJump([40 * 86_400, -3 * 365 * 86_400, 3 * 365 * 86_400][$0.index(3)]) }),
            // The app's extension: a second client on the same store, launched and refreshed at seeded moments.
            (2, { _ in .extensionLaunch }),
            (2, { _ in .extensionRefresh }),
        ]
        let total = table.reduce(0) { $0 + $1.weight }
        while operations.count < count {
            var pick = random.index(total)
            for entry in table {
                if pick < entry.weight {
                    operations.append(entry.make(&random))
                    break
                }
                pick -= entry.weight
            }
        }
        return operations
    }

    /// Runs the seed; returns the violated invariants (empty when the run is clean) and the trace.
    func execute() async throws -> (problems: [String], trace: [String]) {
        let stuckAfter = Duration.seconds(20)
        let tag = String(seed, radix: 36)
        let users = ["a", "b", "c"].map { "r\(tag)-\($0)" }
        let pushTokens = ["push-\(tag)-1", "push-\(tag)-2"]
        let operations = Self.operations(seed: seed, users: users, pushTokens: pushTokens)
        let scheduler = RaceScheduler(seed: seed)
        let clock = ManualClock(now: Date(timeIntervalSince1970: 1_900_000_000))
        let store = InMemoryCredentialStore()
        let jitter = Guarded(SplitMix64(seed: seed ^ 0x1234_5678_9ABC_DEF0))
        let server = self.server
        let provider = ClosureIdentityTokenProvider { request in
            request.externalUserID.map { server.identityToken(sub: $0) }
        }
        // The app, and its extension: the same store, server and clock (no identity-token provider: an
        // extension that never signs in by itself); the extension is launched by an operation, if at all.
        func makeClient(tag: String, provider: (any IdentityTokenProvider)?) -> TesseraClient {
            TesseraClient(
                configuration: TesseraConfiguration(
                    serverURL: server.baseURL,
                    publishableKey: server.project.publishableKey,
                    credentialStore: store,
                    transport: scheduler.gate(TesseraConfiguration.urlSessionTransport),
                    clock: clock,
                    logHandler: { scheduler.noteEvent("  \(tag): \($0.message)") },
                    identityTokenProvider: provider,
                    random: { jitter.withLock { $0.unit() } },
                    observesApplicationLifecycle: false
                ))
        }
        let client = makeClient(tag: "sdk", provider: provider)
        let extensionClient = makeClient(tag: "ext", provider: nil)
        let clients = RaceClients(app: client, extension: extensionClient)

        let problems = Guarded<[String]>([])
        let endings = Guarded<[Ending]>([])
        let running = Guarded(0)
        var next = 0
        var stopped = false
        /// Where the trace stood when the run's last heartbeat interval began, and whether a session was held then.
        var finalBeat: (mark: Int, heldSession: Bool, began: ContinuousClock.Instant)?
        var beatWait: ContinuousClock.Instant?
        var workWait: ContinuousClock.Instant?
        var lastProgress = ContinuousClock.now
        let barrier: @Sendable () async -> Void = { _ = await client.installationID }

        while true {
            await scheduler.settle(quietWindow: quietWindow, barrier: barrier)
            let inFlight = running.withLock { $0 }
            let canLaunch = next < operations.count && inFlight < maxConcurrent
            switch scheduler.decide(extraChoices: canLaunch ? 1 : 0) {
            case .released:
                lastProgress = .now
            case .extra:
                lastProgress = .now
                let operation = operations[next]
                next += 1
                running.withLock { $0 += 1 }
                let index = next
                Task {
                    let outcome = await Self.perform(
                        operation, clients: clients, clock: clock, server: server, scheduler: scheduler,
                        endings: endings)
                    if let outcome {
                        problems.withLock { $0.append("operation #\(index) \(operation): \(outcome)") }
                    }
                    running.withLock { $0 -= 1 }
                    scheduler.noteEvent("done #\(index) \(operation)")
                }
            case .none:
                if inFlight > 0 {
                    if ContinuousClock.now - lastProgress > stuckAfter {
                        problems.withLock { $0.append("stuck: \(inFlight) operations never finished") }
                        return (problems.withLock { $0 }, scheduler.trace)
                    }
                    await Task.yield()
                    continue
                }
                guard next == operations.count else { continue }
                if finalBeat == nil {
                    // Settling cannot see the SDK digest an answer (no event marks its end), and a heartbeat asleep does
                    // not make the client idle: a loop that was replaced may still be in its last tick. Before the clock
                    // moves, everything the client started must have ended: a heartbeat woken while a check is still
                    // being digested joins it (no request in the interval), one woken while a re-establishment winds
                    // up waits for it, and either schedules its next check one interval after the move.
                    let appWorking = await client.work.isWorking
                    let extensionWorking = await extensionClient.work.isWorking
                    if appWorking || extensionWorking {
                        if workWait == nil {
                            scheduler.noteEvent("the client is still at work after settling: waiting for it")
                        }
                        let began = workWait ?? .now
                        workWait = began
                        if ContinuousClock.now - began > stuckAfter {
                            problems.withLock { $0.append("stuck: the client's own work never ended") }
                            return (problems.withLock { $0 }, scheduler.trace)
                        }
                        await Task.yield()
                        continue
                    }
                    workWait = nil
                    // Every run ends with one heartbeat interval (at most 180 s + 10 % jitter): the session the
                    // client holds must be checked within it, or re-established if it ended meanwhile. The
                    // heartbeat must be asleep first (settled, it is the only sleeper): a loop that computed its
                    // delay after the clock moved would start its interval from there.
                    let held = await client.sessions.token != nil
                    if held, clock.sleeperDeadlines.isEmpty {
                        let began = beatWait ?? .now
                        beatWait = began
                        if ContinuousClock.now - began > stuckAfter {
                            problems.withLock { $0.append("no heartbeat scheduled while a session is held") }
                            finalBeat = (scheduler.trace.count, false, .now)
                        }
                        await Task.yield()
                        continue
                    }
                    let asleep = clock.sleeperDeadlines.map { Int($0.timeIntervalSince(clock.now()).rounded()) }
                    scheduler.noteEvent("last interval: clock +199 s, sleepers due in \(asleep) s")
                    finalBeat = (scheduler.trace.count, held, .now)
                    clock.advance(by: .seconds(199))
                    continue
                }
                if let beat = finalBeat, beat.heldSession, !stopped {
                    let sent = scheduler.trace[beat.mark...].contains { label in
                        Self.heartbeatRequests.contains { label.hasPrefix("→ \($0)") }
                    }
                    if !sent {
                        if ContinuousClock.now - beat.began > stuckAfter {
                            let asleep = clock.sleeperDeadlines.map {
                                Int($0.timeIntervalSince(clock.now()).rounded())
                            }
                            problems.withLock {
                                $0.append(
                                    "no heartbeat nor re-establishment within one interval (sleepers due in \(asleep) s)"
                                )
                            }
                            finalBeat = (beat.mark, false, beat.began)
                        }
                        await Task.yield()
                        continue
                    }
                }
                if !stopped {
                    // Everything asked is done: stop the heartbeat, then drain what is left in the background.
                    await client.stop()
                    await extensionClient.stop()
                    stopped = true
                    continue
                }
                // Background work (a re-establishment after a revoke) may still be digesting its last answer:
                // before the checks, a long quiet window; anything new goes back to the scheduler.
                await scheduler.settle(quietWindow: .milliseconds(25), barrier: barrier)
                if scheduler.parkedCount > 0 { continue }
                var found = problems.withLock { $0 }
                found += await checkSharing(clients: clients, trace: scheduler.trace)
                found += try await checkInvariants(
                    client: client, store: store, clock: clock, scheduler: scheduler, operations: operations,
                    endings: endings.withLock { $0 })
                return (found, ["operations: \(operations)"] + scheduler.trace)
            }
        }
    }

    /// The requests that count as the heartbeat's check of a session, or as its re-establishment.
    static let heartbeatRequests = [
        "POST /v1/sessions/authenticate", "POST /v1/sessions/identify", "POST /v1/sessions/anonymous",
    ]

    /// Runs one operation; answers a description of an unexpected outcome, or nil.
    private static func perform(
        _ operation: Operation, clients: RaceClients, clock: ManualClock, server: LiveServer,
        scheduler: RaceScheduler, endings: Guarded<[Ending]>
    ) async -> String? {
        let client = clients.app
        do {
            switch operation {
            case .start: try await client.start()
            case .identify(let sub): try await client.identify(signedIdentityToken: server.identityToken(sub: sub))
            case .identifyAsserted(let id): try await client.identify(userID: id)
            case .signOut, .reset:
                // Nothing else runs between these two hops: the scheduler launched this operation on a settled system.
                let before = await client.sessions.token
                let user = await client.profile?.externalID
                if case .signOut = operation { try await client.signOut() } else { try await client.reset() }
                endings.withLock {
                    $0.append(Ending(operation: "\(operation)", tokenBefore: before, userBefore: user))
                }
            case .refreshSession: try await client.refreshSession()
            case .authenticate: try await client.sessions.authenticate()
            case .extend: try await client.sessions.authenticate(duration: .seconds(7 * 86_400))
            case .registerDevice(let token):
                try await client.registerDeviceToken(token, platform: .fcm, environment: .sandbox)
            case .heartbeat: clock.advance(by: .seconds(181))
            case .adminRevoke:
                guard let profileID = await client.profile?.id else { return nil }
                let status = try await scheduler.outside {
                    try await server.admin("POST", "/v1/admin/profiles/\(profileID)/sessions/revoke").status
                }
                if status != 204 && status != 404 { return "admin revoke answered \(status)" }
            case .refreshProfile: try await client.refreshProfile()
            case .authorizationHeader: _ = try await client.authorizationHeader()
            case .hydrate(let sub):
                // The app's backend signs the user in on its own and hands the session to the SDK.
                let (status, token, profileID) = try await scheduler.outside {
                    let (status, json) = try await server.call(
                        "POST", "/v1/sessions/identify", credential: server.project.publishableKey,
                        body: ["identity_token": server.identityToken(sub: sub)])
                    return (status, json["session_token"] as? String, json.string("profile", "id"))
                }
                guard status == 200, let token else { return "the backend's identify answered \(status)" }
                scheduler.noteSession(token: token, profileID: profileID)
                try await client.sessions.update(tokens: SessionTokens(sessionToken: token))
            case .clearSession: try await client.clearSession()
            case .extensionLaunch:
                clients.launchExtension()
                try await clients.extension.start()
            case .extensionRefresh:
                clients.launchExtension()
                try await clients.extension.refreshSession()
            case .clockJump(let seconds): clock.jump(by: .seconds(seconds))
            }
            return nil
        } catch let error as TesseraError {
            return expectedErrors.contains(error.code) ? nil : "unexpected \(error)"
        } catch {
            return "unexpected \(error)"
        }
    }

    /// The invariants of the moves of two clients on one store and of a device clock that jumps: once
    /// each client has read the store again, both hold the same installation and the same session (no
    /// identity forked); and no session was ended on the device clock's word (the server's sessions
    /// outlive a run by weeks: any "expired" end was decided locally).
    private func checkSharing(clients: RaceClients, trace: [String]) async -> [String] {
        var problems: [String] = []
        for line in trace where line.contains("ended: expired") {
            problems.append("a live session was ended locally: \(line.trimmingCharacters(in: .whitespaces))")
        }
        guard clients.extensionLaunched else { return problems }
        // An app that never launched in the run reads the store now (its state is the extension's).
        if await clients.app.installationID == nil { try? await clients.app.loadState() }
        await clients.extension.syncWithStore()
        await clients.app.syncWithStore()
        let app = (await clients.app.installationID, await clients.app.sessions.token, await clients.app.profile?.id)
        let ext = (
            await clients.extension.installationID, await clients.extension.sessions.token,
            await clients.extension.profile?.id
        )
        if app.0 != ext.0 || app.1 != ext.1 || app.2 != ext.2 {
            problems.append(
                "identity forked: the app holds installation \(app.0?.uuidString ?? "none"), profile \(app.2 ?? "none"); the extension \(ext.0?.uuidString ?? "none"), profile \(ext.2 ?? "none")\(app.1 == ext.1 ? "" : ", another session")"
            )
        }
        return problems
    }

    /// The invariants after a run, with everything drained.
    private func checkInvariants(
        client: TesseraClient, store: InMemoryCredentialStore, clock: ManualClock, scheduler: RaceScheduler,
        operations: [Operation], endings: [Ending]
    ) async throws -> [String] {
        var problems: [String] = []
        let published = client.sessionState
        let publishedProfile = client.profileState
        let token = await client.sessions.token
        let current = await client.sessions.current
        let profile = await client.profile
        let device = await client.registeredDevice
        let installation = await client.installationID

        // 1. What the client publishes is what it holds.
        if published.value?.id != current?.id {
            problems.append("published session \(published) but the client holds \(current?.id ?? "none")")
        }
        if publishedProfile.value?.id != profile?.id {
            problems.append("published profile \(publishedProfile) but the client holds \(profile?.id ?? "none")")
        }

        // (Read before the reload: a reloaded client without a session rotates a consumed installation and saves it.)
        let storedInstallation =
            (try? store.load("tessera")).flatMap {
                (try? JSONSerialization.jsonObject(with: $0)) as? [String: Any]
            }?["installationID"] as? String
        // 2. What the store holds is what was published: a fresh client restores it without any network.
        let reloaded = TesseraClient(
            configuration: TesseraConfiguration(
                serverURL: server.baseURL, publishableKey: server.project.publishableKey, credentialStore: store,
                transport: offlineTransport, clock: clock, observesApplicationLifecycle: false))
        try? await reloaded.start()
        await reloaded.stop()
        if reloaded.sessionState != published {
            problems.append("persisted session state \(reloaded.sessionState) ≠ published \(published)")
        }
        if reloaded.profileState != publishedProfile {
            problems.append("persisted profile state ≠ published (\(reloaded.profileState) vs \(publishedProfile))")
        }
        if await reloaded.sessions.token != token { problems.append("persisted session token ≠ the client's") }
        if await reloaded.registeredDevice != device {
            problems.append(
                "persisted device \(String(describing: await reloaded.registeredDevice)) ≠ \(String(describing: device))"
            )
        }
        if storedInstallation.flatMap(UUID.init(uuidString:)) != installation {
            problems.append(
                "persisted installation \(storedInstallation ?? "none") ≠ the client's \(String(describing: installation))"
            )
        }

        // 3. The session the client holds is alive on the server (a session the backend revoked was noticed by
        //    the run's last heartbeat and replaced), and is the one it believes.
        if let token {
            let (status, json) = try await server.authenticate(sessionToken: token)
            if status != 200 {
                problems.append(
                    "the current session \(current?.id ?? "?") (\(profile?.externalID ?? "anonymous")) is dead on the server: \(status) \(json.string("error", "code") ?? "")"
                )
            } else if json.string("session", "id") != current?.id || json.string("profile", "id") != profile?.id {
                problems.append("the server's view of the current session differs from the client's")
            }
        }

        // 4. No other session handed out during the run survives: not one of a signed-out or reset user,
        //    not an answer the client dropped.
        for other in scheduler.sessionTokens where other != token {
            let (status, json) = try await server.authenticate(sessionToken: other)
            if status != 401 {
                problems.append(
                    "a session the client no longer holds is alive (\(status), profile \(json.string("profile", "id") ?? "?"), \(json.string("profile", "external_id") ?? "anonymous"))"
                )
            }
        }

        // 5. No profile seen in the run has a live session or device token other than the current session.
        for profileID in scheduler.profileIDs {
            // A merged anonymous profile is an alias: the admin API answers for the profile it joined.
            guard try await server.resolvedProfileID(profileID) == profileID else { continue }
            for session in try await server.liveSessions(profileID: profileID) ?? [] {
                let id = session["id"] as? String
                if id != current?.id { problems.append("profile \(profileID) keeps live session \(id ?? "?")") }
            }
            for bound in try await server.liveDevices(profileID: profileID) ?? [] {
                let sessionID = bound["session_id"] as? String
                if sessionID != current?.id || profileID != profile?.id {
                    problems.append(
                        "device token \(bound["token"] as? String ?? "?") stays bound to profile \(profileID) (session \(sessionID ?? "?")); the client holds session \(current?.id ?? "none") of profile \(profile?.id ?? "none"), registration \(device.map { "\($0.id) on \($0.sessionID)" } ?? "none")"
                    )
                }
            }
        }

        // 6. Each completed sign-out and reset: the session held before it gets 401, and the user it signed
        //    out (unless signed in again since) has no live session and no device on the server.
        for ending in endings {
            if let before = ending.tokenBefore {
                if before == token {
                    problems.append("\(ending.operation) completed but its session is still the current one")
                } else {
                    let (status, _) = try await server.authenticate(sessionToken: before)
                    if status != 401 {
                        problems.append("the session held before \(ending.operation) answers \(status)")
                    }
                }
            }
            if let user = ending.userBefore, user != profile?.externalID {
                for signedOut in try await server.profiles(externalID: user) {
                    guard let id = signedOut["id"] as? String else { continue }
                    let sessions = try await server.liveSessions(profileID: id) ?? []
                    let devices = try await server.liveDevices(profileID: id) ?? []
                    if !sessions.isEmpty || !devices.isEmpty {
                        problems.append(
                            "\(user), out by \(ending.operation), keeps \(sessions.count) live sessions and \(devices.count) devices"
                        )
                    }
                }
            }
        }
        return problems
    }
}

/// The app's client and its extension's, on one store.
final class RaceClients: Sendable {
    let app: TesseraClient
    let `extension`: TesseraClient
    private let launched = Guarded(false)

    init(app: TesseraClient, extension: TesseraClient) {
        self.app = app
        self.extension = `extension`
    }

    /// Whether an operation launched the extension.
    var extensionLaunched: Bool { launched.withLock { $0 } }

    func launchExtension() { launched.withLock { $0 = true } }
}
