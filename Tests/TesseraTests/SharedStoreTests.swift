import Foundation
import Testing

@testable import Tessera

/// Two clients on one store: an app and its extension (a widget, a share extension, a notification
/// service) sharing the keychain access group or the app group's files so that they share the user.
/// Whichever writes last, neither loses nor forks the identity: the store is the source of truth.
@Suite("Two clients on one store")
struct SharedStoreTests {
    /// The kinds of shared store, each fresh.
    enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
        case memory, file, keychain

        var testDescription: String { rawValue }

        func make() -> any CredentialStore {
            switch self {
            case .memory: return InMemoryCredentialStore()
            case .file: return EncryptedFileStore(directory: temporaryDirectory())
            case .keychain:
                return KeychainBackedStore(
                    keychain: FakeKeychain(), installationMarker: InstallationMarker(directory: temporaryDirectory()),
                    lockFile: temporaryDirectory().appendingPathComponent("tessera.lock").path)
            }
        }
    }

    /// The app and its extension on `store`: one device (clock, server), both started on the app's
    /// anonymous identity, both quiet.
    static func appAndExtension(_ store: any CredentialStore) async throws -> (app: Harness, ext: Harness) {
        let app = Harness(store: store)
        try await app.start(quiet: true)
        let ext = Harness(store: store, clock: app.clock, server: app.server)
        try await ext.start(quiet: true)
        #expect(await ext.client.sessions.token == app.client.sessions.token)
        return (app, ext)
    }

    @Test(
        "The app signs in while the extension holds the anonymous session: the extension takes the user",
        arguments: StoreKind.allCases)
    func extensionFollowsTheApp(kind: StoreKind) async throws {
        let (app, ext) = try await Self.appAndExtension(kind.make())
        try await app.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let signedIn = try #require(await app.client.sessions.token)

        // The extension wakes with the anonymous session in memory, which the sign-in ended on the server.
        _ = try? await ext.client.refreshSession()
        await ext.client.reestablishTask?.value

        #expect(try app.storedState()?.session?.profile.externalID == "alice")
        #expect(try app.storedState()?.session?.token == signedIn)
        #expect(await ext.client.profile?.externalID == "alice")
        #expect(await ext.client.sessions.token == signedIn)
        #expect(await app.client.sessions.token == signedIn)
        #expect(app.server.liveSessions.count == 1, "no second identity was created")
    }

    @Test(
        "The extension writes last from stale memory: the app's push token registration is kept",
        arguments: StoreKind.allCases)
    func staleWriteKeepsTheOthersChange(kind: StoreKind) async throws {
        let (app, ext) = try await Self.appAndExtension(kind.make())
        let (device, _) = try await app.registerPushToken()

        // The extension checks the session (a write of the session it holds, without the registration).
        try await ext.client.sessions.authenticate()

        #expect(try app.storedState()?.device?.device == device)
        #expect(await ext.client.registeredDevice == device)
        #expect(await app.client.registeredDevice == device)
    }

    @Test(
        "The app's sign-in could not be written; the extension re-established meanwhile: one identity once both write")
    func failedWriteMergedLater() async throws {
        let store = FaultyStore(InMemoryCredentialStore())
        let (app, ext) = try await Self.appAndExtension(store)
        store.failSaves(1)
        try await app.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        let signedIn = try #require(await app.client.sessions.token)
        #expect(try app.storedState()?.session?.profile.externalID == nil, "the write failed")

        // The extension finds its anonymous session ended and starts a new one for the installation.
        _ = try? await ext.client.refreshSession()
        await ext.client.reestablishTask?.value
        let orphan = try #require(try app.storedState()?.session?.token)
        #expect(orphan != signedIn)

        // The app's next heartbeat writes its sign-in, merged: the signed-in session wins, the other one is revoked.
        _ = await app.client.tick()
        #expect(try app.storedState()?.session?.token == signedIn)
        _ = await ext.client.tick()
        #expect(await ext.client.sessions.token == signedIn)
        #expect(app.server.session(token: orphan)?.endCode != nil, "the losing session was revoked")
        #expect(try app.storedState()?.pendingRevocations == [])
    }

    @Test(
        "The app resets before it ever read the store and the extension's session is written meanwhile: it is revoked",
        arguments: StoreKind.allCases)
    func resetBeforeStartRevokesTheExtensionsSession(kind: StoreKind) async throws {
        let store = FaultyStore(kind.make())
        let app = Harness(store: store)
        let ext = Harness(store: store, clock: app.clock, server: app.server)
        try await ext.start(quiet: true)
        let extensions = try #require(await ext.client.sessions.token)
        // The reset reads the store as it was before the extension's session was written (the extension's
        // answer arrived between the reset's read and its write).
        var before = try #require(try ext.storedState())
        before.session = nil
        store.serveStale(try WireCoding.encoder().encode(before))

        try await app.client.reset()
        let fresh = try #require(await app.client.sessions.token)
        #expect(fresh != extensions)
        #expect(app.server.session(token: extensions)?.endCode != nil, "the extension's session was revoked")
        #expect(app.server.liveSessions.count == 1)
        #expect(try app.storedState()?.session?.token == fresh)
        #expect(try app.storedState()?.pendingRevocations == [])
        _ = await ext.client.tick()
        #expect(await ext.client.sessions.token == fresh, "the extension follows the store")
    }

    @Test("A sign-out in the app is not undone by the extension's refresh of the signed-out session")
    func signOutWins() async throws {
        let (app, ext) = try await Self.appAndExtension(InMemoryCredentialStore())
        try await app.client.identify(signedIdentityToken: FakeServer.identityToken(sub: "alice"))
        try await ext.client.refreshSession()
        #expect(await ext.client.profile?.externalID == "alice")
        try await app.client.signOut()
        let anonymous = try #require(await app.client.sessions.token)

        _ = try? await ext.client.sessions.authenticate()
        await ext.client.reestablishTask?.value
        #expect(await ext.client.sessions.token == anonymous)
        #expect(await ext.client.profile?.externalID == nil)
        #expect(try app.storedState()?.session?.token == anonymous)
    }
}

@Suite("StateMerge")
struct StateMergeTests {
    @Test("A field only one side changed takes that side's value")
    func oneSideChanges() {
        let base = Fixtures.state(session: Fixtures.session("s0"))
        var mine = base
        mine.device = Fixtures.device("d1", registeredBy: "s0")
        var theirs = base
        theirs.session = Fixtures.session("s0", validatedAt: Fixtures.epoch.addingTimeInterval(60))
        let merged = StateMerge.merge(base: base, mine: mine, theirs: theirs)
        #expect(merged.device == mine.device)
        #expect(merged.session == theirs.session, "the same session, validated later")
    }

    @Test("Both replaced the session: the signed-in one wins, the other is queued for revocation")
    func bothReplaced() {
        let base = Fixtures.state(session: Fixtures.session("s0"))
        var mine = base
        mine.session = Fixtures.session("s1", kind: .verified)
        mine.installationConsumed = true
        var theirs = base
        theirs.session = Fixtures.session("s2")
        theirs.device = Fixtures.device("d2", registeredBy: "s2")
        let merged = StateMerge.merge(base: base, mine: mine, theirs: theirs)
        #expect(merged.session?.token == "s1")
        #expect(merged.installationConsumed)
        #expect(merged.device == nil, "bound to the revoked session")
        #expect(merged.pendingRevocations == [PendingRevocation(sessionToken: "s2")])
        let reversed = StateMerge.merge(base: base, mine: theirs, theirs: mine)
        #expect(reversed.session?.token == "s1")
        #expect(reversed.pendingRevocations == [PendingRevocation(sessionToken: "s2")])
    }

    @Test("A tie keeps the stored session")
    func tieKeepsStored() {
        let base = Fixtures.state()
        var mine = base
        mine.session = Fixtures.session("s1")
        var theirs = base
        theirs.session = Fixtures.session("s2")
        let merged = StateMerge.merge(base: base, mine: mine, theirs: theirs)
        #expect(merged.session?.token == "s2")
        #expect(merged.pendingRevocations == [PendingRevocation(sessionToken: "s1")])
    }

    @Test("Queues: the stored queue, plus what this client queued, minus what it flushed")
    func queues() {
        let a = PendingRevocation(sessionToken: "a")
        let b = PendingRevocation(sessionToken: "b")
        let c = PendingRevocation(sessionToken: "c")
        let base = Fixtures.state(queued: [a])
        var mine = base
        mine.pendingRevocations = [b]
        var theirs = base
        theirs.pendingRevocations = [a, c]
        let merged = StateMerge.merge(base: base, mine: mine, theirs: theirs)
        #expect(merged.pendingRevocations == [c, b])
    }

    @Test("A reset (a new installation) on one side wins over the other side's untouched installation")
    func rotation() {
        let base = Fixtures.state(session: Fixtures.session("s0"))
        var mine = base
        mine.rotateInstallation()
        mine.session = nil
        mine.pendingRevocations = [PendingRevocation(sessionToken: "s0")]
        var theirs = base
        theirs.session = Fixtures.session("s0", validatedAt: Fixtures.epoch.addingTimeInterval(60))
        let merged = StateMerge.merge(base: base, mine: mine, theirs: theirs)
        #expect(merged.installationID == mine.installationID)
        #expect(merged.installationSecret == mine.installationSecret)
        #expect(merged.session == nil)
        #expect(merged.pendingRevocations == [PendingRevocation(sessionToken: "s0")])
    }

    @Test("Nothing stored, or nothing changed on the other side: this client's state")
    func trivial() {
        let base = Fixtures.state(session: Fixtures.session("s0"))
        var mine = base
        mine.session = nil
        #expect(StateMerge.merge(base: base, mine: mine, theirs: nil) == mine)
        #expect(StateMerge.merge(base: base, mine: mine, theirs: base) == mine)
        #expect(StateMerge.merge(base: base, mine: base, theirs: mine) == mine)
        #expect(StateMerge.merge(base: nil, mine: mine, theirs: nil) == mine)
    }

    @Test("Without a base (a reset before start), this client's state replaces the stored one, whose session is queued")
    func noBase() {
        let queued = PendingRevocation(sessionToken: "q")
        var theirs = Fixtures.state(session: Fixtures.session("x1"), queued: [queued])
        theirs.device = Fixtures.device("d1", registeredBy: "x1")
        var mine = Fixtures.state()
        mine.rotateInstallation()
        let merged = StateMerge.merge(base: nil, mine: mine, theirs: theirs)
        #expect(merged.installationID == mine.installationID)
        #expect(merged.session == nil)
        #expect(merged.device == nil)
        #expect(merged.pendingRevocations == [queued, PendingRevocation(sessionToken: "x1")])

        mine.session = Fixtures.session("x1")
        let same = StateMerge.merge(base: nil, mine: mine, theirs: theirs)
        #expect(same.pendingRevocations == [queued], "the session this client holds is not revoked")
    }
}

/// A store that fails the next writes it is told to: a keychain or disk that refuses for a moment.
final class FaultyStore: CredentialStore {
    let inner: any CredentialStore
    private let failures = Locked(0)
    private let stale = Locked<Data?>(nil)

    init(_ inner: any CredentialStore) { self.inner = inner }

    func failSaves(_ count: Int) { failures.withLock { $0 = count } }

    /// The next load answers `data` (a read made before another client's write landed).
    func serveStale(_ data: Data) { stale.withLock { $0 = data } }

    func load(_ key: String) throws(CredentialStoreError) -> Data? {
        if let data = stale.withLock({ value -> Data? in
            defer { value = nil }
            return value
        }) {
            return data
        }
        return try inner.load(key)
    }
    func save(_ data: Data, for key: String) throws(CredentialStoreError) {
        let fail = failures.withLock { count -> Bool in
            guard count > 0 else { return false }
            count -= 1
            return true
        }
        if fail { throw .unavailable("injected write failure") }
        try inner.save(data, for: key)
    }
    func remove(_ key: String) throws(CredentialStoreError) { try inner.remove(key) }
    func create(_ data: Data, for key: String) throws(CredentialStoreError) -> Data? {
        try inner.create(data, for: key)
    }
    func withExclusiveAccess<Result>(
        to key: String, _ body: () throws(CredentialStoreError) -> Result
    ) throws(CredentialStoreError) -> Result {
        try inner.withExclusiveAccess(to: key, body)
    }
}
