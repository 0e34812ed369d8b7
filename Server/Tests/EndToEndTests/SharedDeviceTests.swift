import Foundation
import Tessera
import Testing

/// One installation (one encrypted file store) shared by several people: a seeded sequence of
/// signed and client-asserted sign-ins, sign-outs, resets, relaunches, anonymous phases, push-token
/// registrations and heartbeats, checked after every step against the live server through the admin
/// API and the session endpoints. Meanwhile each user is also signed in on a device of their own,
/// which nothing on the shared device may touch.
///
/// `TESSERA_SHARED_DEVICE_SEEDS` sets the number of seeds (default 8), `TESSERA_SHARED_DEVICE_SEED`
/// replays one.
@Suite("Shared device against a live server")
struct SharedDeviceTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seedCount = environment["TESSERA_SHARED_DEVICE_SEEDS"].flatMap { Int($0) } ?? 8
    static let replay = environment["TESSERA_SHARED_DEVICE_SEED"].flatMap { UInt64(seedText: $0) }
    static let steps = 30

    @Test("Users take turns on one installation: nobody sees another's sessions or devices")
    func usersTakeTurns() async throws {
        let seeds =
            Self.replay.map { [$0] }
            ?? (0..<Self.seedCount).map { SplitMix64(seed: 0x5AED_DE71_CE00 + UInt64($0)).seedValue }
        try await LiveServer.run { server in
            for seed in seeds {
                var walk = SharedDeviceWalk(seed: seed, server: server)
                do {
                    try await walk.run(steps: Self.steps)
                } catch {
                    Issue.record("seed \(seed.seedText) (TESSERA_SHARED_DEVICE_SEED=\(seed.seedText)): \(error)")
                }
                await walk.finish()
                if !walk.problems.isEmpty {
                    Issue.record(
                        """
                        seed \(seed.seedText) (replay: TESSERA_SHARED_DEVICE_SEED=\(seed.seedText)):
                          \(walk.problems.joined(separator: "\n  "))
                        steps:
                          \(walk.log.joined(separator: "\n  "))
                        """)
                }
            }
        }
    }
}

extension SplitMix64 {
    /// The first output, as a seed of its own.
    var seedValue: UInt64 {
        var copy = self
        return copy.next()
    }
}

/// The walk of one seed, with its model of who should be signed in.
struct SharedDeviceWalk {
    /// A user of the model: the external ID and whether the sign-in was signed.
    struct User: Hashable, CustomStringConvertible {
        var id: String
        var verified: Bool
        var description: String { verified ? id : "\(id) (asserted)" }
    }

    /// A user's own device: a client that stays signed in, with a push token of its own.
    struct OwnDevice {
        var client: TesseraClient
        var sessionID: String
        var token: String
        var profileID: String
        var pushToken: String
    }

    let seed: UInt64
    let server: LiveServer
    var random: SplitMix64
    let directory: URL
    let users: [String]
    let pushToken: String
    var client: TesseraClient
    /// Who the model says is signed in on the shared device (nil: anonymous).
    var expected: User?
    /// Every profile the shared device ever had, and who it belonged to (nil: anonymous).
    var profiles: [String: User?] = [:]
    var ownDevices: [String: OwnDevice] = [:]
    var problems: [String] = []
    var log: [String] = []

    init(seed: UInt64, server: LiveServer) {
        self.seed = seed
        self.server = server
        random = SplitMix64(seed: seed)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-shared-\(UUID())")
        let tag = String(seed, radix: 36)
        users = ["alice", "bob", "carol"].map { "\($0)-\(tag)" }
        pushToken = "shared-push-\(tag)"
        client = Self.makeClient(server: server, directory: directory)
    }

    static func makeClient(server: LiveServer, directory: URL) -> TesseraClient {
        TesseraClient(
            configuration: TesseraConfiguration(
                serverURL: server.baseURL, publishableKey: server.project.publishableKey,
                credentialStore: EncryptedFileStore(directory: directory), observesApplicationLifecycle: false))
    }

    mutating func run(steps: Int) async throws {
        // Every user is also signed in on a phone of their own.
        for user in users {
            let own = TesseraClient(
                configuration: TesseraConfiguration(
                    serverURL: server.baseURL, publishableKey: server.project.publishableKey,
                    credentialStore: InMemoryCredentialStore(), observesApplicationLifecycle: false))
            try await own.start()
            await own.stop()
            try await own.identify(signedIdentityToken: server.identityToken(sub: user))
            let push = "own-push-\(user)"
            try await own.registerDeviceToken(push, platform: .apns, environment: .production)
            ownDevices[user] = OwnDevice(
                client: own, sessionID: try #require(await own.sessions.current?.id),
                token: try #require(await own.sessions.token), profileID: try #require(await own.profile?.id),
                pushToken: push)
        }
        try await client.start()
        await client.stop()
        try await note("start")
        for _ in 0..<steps {
            try await step()
        }
    }

    mutating func finish() async {
        await client.stop()
        for device in ownDevices.values { await device.client.stop() }
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Steps

    private mutating func step() async throws {
        let server = self.server
        let user = users[random.index(users.count)]
        switch random.index(12) {
        case 0, 1, 2:
            let target = User(id: user, verified: true)
            try await signIn(target, "identify(\(user))") {
                try await $0.identify(signedIdentityToken: server.identityToken(sub: user))
            }
        case 3:
            let target = User(id: user, verified: false)
            try await signIn(target, "identify(userID: \(user))") { try await $0.identify(userID: user) }
        case 4, 5:
            let before = await client.profile?.id
            try await client.signOut()
            await client.stop()
            expected = nil
            try await note("signOut", mustBeNewAfter: before)
        case 6:
            let before = await client.profile?.id
            let installation = await client.installationID
            try await client.reset()
            await client.stop()
            expected = nil
            if await client.installationID == installation { problems.append("reset kept the installation ID") }
            try await note("reset", mustBeNewAfter: before)
        case 7, 8:
            try await client.registerDeviceToken(pushToken, platform: .apns, environment: .sandbox)
            try await note("registerDevice")
        case 9:
            try await client.sessions.authenticate()
            try await note("heartbeat")
        case 10:
            try await client.sessions.authenticate(duration: .seconds(30 * 86_400))
            try await note("extend")
        default:
            // The app is killed and launched again on the same store.
            let session = await client.sessions.current
            let device = await client.registeredDevice
            await client.stop()
            client = Self.makeClient(server: server, directory: directory)
            try await client.start()
            await client.stop()
            if await client.sessions.current?.id != session?.id { problems.append("relaunch lost the session") }
            if await client.registeredDevice != device { problems.append("relaunch lost the device registration") }
            try await note("relaunch")
        }
    }

    /// Identifies, expecting the local or server refusal when another user is signed in.
    private mutating func signIn(
        _ target: User, _ label: String, _ call: (TesseraClient) async throws -> Capabilities
    ) async throws {
        let before = await client.profile
        // An asserted user proving its own user ID with a signed token upgrades (`merged`), by contract;
        // any other switch of user is refused.
        let upgrade = expected.map { !$0.verified && target.verified && $0.id == target.id } ?? false
        if let current = expected, current != target, !upgrade {
            let error = await #expect(throws: TesseraError.self) { try await call(client) }
            if error?.code != .externalUserIDChanged {
                problems.append(
                    "\(label) while \(current) is signed in: \(String(describing: error)), not external_user_id_changed"
                )
            }
            if await client.profile != before { problems.append("a refused \(label) changed the profile") }
            try await note("\(label) refused")
            return
        }
        let capabilities = try await call(client)
        if capabilities.authenticated != target.verified {
            problems.append("\(label): authenticated = \(capabilities.authenticated)")
        }
        expected = target
        try await note(label)
    }

    // MARK: Checks

    /// Logs the step, then checks the client against the model and the server.
    private mutating func note(_ label: String, mustBeNewAfter previous: String? = nil) async throws {
        log.append(label)
        let profile = try #require(await client.profile, "no profile after \(label)")
        let sessionID = try #require(await client.sessions.current?.id, "no session after \(label)")
        let token = try #require(await client.sessions.token)
        let fail = { (text: String) in "after \(label): \(text)" }
        if let previous, profile.id == previous || profiles[profile.id] != nil {
            problems.append(fail("the fresh anonymous profile \(profile.id) is an old one"))
        }
        // A profile keeps its owner; only an anonymous one may become a user's (promoted by identify).
        if let existing = profiles[profile.id], existing != expected, existing != nil {
            problems.append(
                fail(
                    "profile \(profile.id) belonged to \(String(describing: existing)), now \(String(describing: expected))"
                ))
        }
        profiles[profile.id] = .some(expected)

        // The client against the model.
        if profile.externalID != expected?.id || profile.verified != (expected?.verified ?? false)
            || (profile.kind == .anonymous) != (expected == nil)
        {
            problems.append(
                fail("the client shows \(profile.externalID ?? "anonymous"), the model \(String(describing: expected))")
            )
        }

        // /v1/me and /v1/sessions with the current session: only the current profile's data.
        let me = try await server.call("GET", "/v1/me", credential: token)
        if me.status != 200 || me.json.string("profile", "id") != profile.id {
            problems.append(fail("/v1/me answered \(me.status) for profile \(me.json.string("profile", "id") ?? "?")"))
        }
        let listed = try await server.call("GET", "/v1/sessions", credential: token)
        let sessions = listed.json["sessions"] as? [[String: Any]] ?? []
        var allowed: Set<String> = [sessionID]
        if let user = expected, user.verified, let own = ownDevices[user.id] { allowed.insert(own.sessionID) }
        let seen = Set(sessions.compactMap { $0["id"] as? String })
        if listed.status != 200 || seen != allowed
            || sessions.contains(where: { $0["profile_id"] as? String != profile.id })
        {
            problems.append(fail("/v1/sessions lists \(seen.sorted()), expected \(allowed.sorted())"))
        }

        // Every profile this installation ever had: only its own live sessions and devices; none of the
        // shared device's old sessions alive; the shared push token bound to the current session or nowhere.
        let registered = await client.registeredDevice
        var boundShared: [String] = []
        for (profileID, owner) in profiles {
            // A merged anonymous profile is an alias: the admin API answers for the profile it joined.
            guard try await server.resolvedProfileID(profileID) == profileID else { continue }
            let own = owner.flatMap { $0.verified ? ownDevices[$0.id] : nil }
            let live = try await server.liveSessions(profileID: profileID) ?? []
            for session in live {
                let id = session["id"] as? String ?? "?"
                if session["profile_id"] as? String != profileID {
                    problems.append(fail("profile \(profileID) lists session \(id) of another profile"))
                }
                if id != sessionID && id != own?.sessionID {
                    problems.append(
                        fail(
                            "profile \(profileID) (\(String(describing: owner))) keeps the shared device's old session \(id)"
                        ))
                }
            }
            let liveIDs = Set(live.compactMap { $0["id"] as? String })
            for device in try await server.liveDevices(profileID: profileID) ?? [] {
                let bound = device["session_id"] as? String ?? "?"
                if !liveIDs.contains(bound) {
                    problems.append(fail("profile \(profileID) lists a device of session \(bound), not one of its own"))
                }
                if device["token"] as? String == pushToken { boundShared.append(profileID) }
            }
        }
        if registered?.sessionID == sessionID {
            if boundShared != [profile.id] {
                problems.append(fail("the shared push token is bound to \(boundShared), expected [\(profile.id)]"))
            }
        } else if !boundShared.isEmpty {
            problems.append(
                fail(
                    "the shared push token is bound to \(boundShared) while the client has no registration for this session"
                ))
        }

        // Everyone's own phone is untouched: its session alive, its push token bound to its session.
        for (user, own) in ownDevices {
            let check = try await server.authenticate(sessionToken: own.token)
            if check.status != 200 || check.json.string("session", "id") != own.sessionID {
                problems.append(fail("\(user)'s own phone lost its session (\(check.status))"))
            }
            let devices = try await server.liveDevices(profileID: own.profileID) ?? []
            let tokens = devices.compactMap { $0["token"] as? String }
            if !tokens.contains(own.pushToken) { problems.append(fail("\(user)'s own push token was unbound")) }
        }
    }
}
