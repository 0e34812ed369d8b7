import Testing

@testable import Tessera

@Suite("Session ledger: generations and the end of the local session")
struct SessionLedgerTests {
    @Test("A stale generation does not apply: check throws superseded once a newer call started")
    func staleGeneration() throws {
        var ledger = SessionLedger()
        let first = ledger.advance()
        try ledger.check(first)
        let second = ledger.advanceForIdentify()
        #expect(!ledger.isCurrent(first))
        #expect(ledger.isCurrent(second))
        #expect(throws: TesseraError.self) { try ledger.check(first) }
        do {
            try ledger.check(first)
        } catch {
            #expect(error.code == .superseded)
        }
    }

    @Test("Only identifies started since: a sign-out or reset in between counts")
    func onlyIdentifiesSince() {
        var ledger = SessionLedger()
        let gen = ledger.advanceForIdentify()
        let before = ledger.identifyGenerations
        ledger.advanceForIdentify()
        ledger.advanceForIdentify()
        #expect(ledger.onlyIdentifiesStarted(since: gen, identifiesBefore: before))
        ledger.advance()
        #expect(!ledger.onlyIdentifiesStarted(since: gen, identifiesBefore: before))
    }

    @Test("Ending a session queues its revocation with its push token's unregistration first, after the queued ones")
    func endQueuesDeviceThenSession() {
        var ledger = SessionLedger()
        let old = PendingRevocation(sessionToken: "old")
        ledger.state = Fixtures.state(
            session: Fixtures.session("s1"), device: Fixtures.device("d1", registeredBy: "s1"), queued: [old])
        let items = ledger.unqueued(ledger.revocations(endingAllBut: nil))
        #expect(
            items == [PendingRevocation(sessionToken: "s1", deviceID: "d1")], "one item: unregister d1, then revoke s1")
        let ended = ledger.endSession(.signedOut, pushTokens: .any, queueing: items)
        #expect(ended?.token == "s1")
        #expect(ledger.state?.pendingRevocations == [old, PendingRevocation(sessionToken: "s1", deviceID: "d1")])
        #expect(ledger.state?.session == nil)
        #expect(ledger.state?.device == nil)
        #expect(ledger.state?.lastEndReason == .signedOut)
        #expect(ledger.state?.installationConsumed == false, "an anonymous session does not consume the installation")
    }

    @Test("A push token registered by another session is unregistered with that session's credential")
    func deviceOfAnotherSession() {
        var ledger = SessionLedger()
        ledger.state = Fixtures.state(
            session: Fixtures.session("s2"), device: Fixtures.device("d1", registeredBy: "s1"))
        #expect(
            ledger.revocations(endingAllBut: nil) == [
                PendingRevocation(sessionToken: "s2"), PendingRevocation(sessionToken: "s1", deviceID: "d1"),
            ])
    }

    @Test("A session the server ended takes only its own push token, and an identified one consumes the installation")
    func serverEndedSession() {
        var ledger = SessionLedger()
        ledger.state = Fixtures.state(
            session: Fixtures.session("s1", kind: .verified), device: Fixtures.device("d1", registeredBy: "s0"))
        ledger.endSession(.revoked, pushTokens: .boundToEndedSession)
        #expect(ledger.state?.device?.device.id == "d1", "a push token of another session stays")
        #expect(ledger.state?.pendingRevocations == [], "nothing is owed: the server ended it")
        #expect(ledger.state?.lastEndReason == .revoked)
        #expect(ledger.state?.installationConsumed == true)

        ledger.state = Fixtures.state(
            session: Fixtures.session("s1"), device: Fixtures.device("d1", registeredBy: "s1"))
        ledger.endSession(.expired, pushTokens: .boundToEndedSession)
        #expect(ledger.state?.device == nil, "the server dropped the push token with its session")
        #expect(ledger.state?.installationConsumed == false)
    }

    @Test("Sign-out consumes the installation even from an anonymous session")
    func signOutConsumes() {
        var ledger = SessionLedger()
        ledger.state = Fixtures.state(session: Fixtures.session("s1"))
        ledger.endSession(.signedOut, pushTokens: .any, consumesInstallation: true)
        #expect(ledger.state?.installationConsumed == true)
    }

    @Test("Hydration keeps the hydrated session and its push token, and ends the others")
    func hydrationKeeps() {
        var ledger = SessionLedger()
        ledger.state = Fixtures.state(
            session: Fixtures.session("s1", kind: .verified), device: Fixtures.device("d1", registeredBy: "s2"))
        #expect(ledger.revocations(endingAllBut: "s2") == [PendingRevocation(sessionToken: "s1")])
        let ended = ledger.endSession(.signedOut, keeping: "s2", pushTokens: .any)
        #expect(ended?.token == "s1")
        #expect(ledger.state?.device?.device.id == "d1", "bound to the kept session: it stays")
        #expect(ledger.state?.installationConsumed == true)

        ledger.state = Fixtures.state(
            session: Fixtures.session("s2"), device: Fixtures.device("d1", registeredBy: "s1"))
        #expect(ledger.revocations(endingAllBut: "s2") == [PendingRevocation(sessionToken: "s1", deviceID: "d1")])
        let kept = ledger.endSession(.signedOut, keeping: "s2", pushTokens: .any)
        #expect(kept == nil, "the kept session is not ended")
        #expect(ledger.state?.session?.token == "s2")
        #expect(ledger.state?.device == nil, "a push token of another session leaves (it moves to the kept one)")
    }

    @Test("What replaced the session and push token a sign-out captured is owed too; what it captured is not")
    func replacedSinceCaptured() {
        var ledger = SessionLedger()
        let captured = Fixtures.device("d1", registeredBy: "s1")
        ledger.state = Fixtures.state(
            session: Fixtures.session("s1"), device: captured, queued: [.init(sessionToken: "q")])
        #expect(ledger.revocations(replacing: "s1", device: captured) == [], "nothing replaced them")
        ledger.state?.session = Fixtures.session("s2")
        ledger.state?.device = Fixtures.device("d2", registeredBy: "s2")
        #expect(
            ledger.revocations(replacing: "s1", device: captured) == [
                PendingRevocation(sessionToken: "s2", deviceID: "d2")
            ])
        #expect(
            ledger.revocations(replacing: nil, device: nil) == [PendingRevocation(sessionToken: "s2", deviceID: "d2")],
            "a session that appeared where there was none is owed too")
    }

    @Test("Nothing happens before the state is loaded")
    func unloaded() {
        var ledger = SessionLedger()
        let ended = ledger.endSession(.signedOut, pushTokens: .any, queueing: [PendingRevocation(sessionToken: "x")])
        #expect(ended == nil)
        ledger.queue(PendingRevocation(sessionToken: "x"))
        #expect(ledger.state == nil)
    }

    @Test("The queue: an item leaves once acknowledged, once")
    func dequeue() {
        var ledger = SessionLedger()
        ledger.state = Fixtures.state()
        let item = PendingRevocation(sessionToken: "s1", deviceID: "d1")
        ledger.queue(item)
        #expect(
            ledger.unqueued([item, PendingRevocation(sessionToken: "s2")]) == [PendingRevocation(sessionToken: "s2")])
        let first = ledger.dequeue(item)
        let second = ledger.dequeue(item)
        #expect(first)
        #expect(!second, "acknowledged once")
        #expect(ledger.state?.pendingRevocations == [])
    }

    @Test("A replacing installation owes everything the previous one leaves behind")
    func freshInstallation() {
        let previous = Fixtures.state(
            session: Fixtures.session("s1"), device: Fixtures.device("d1", registeredBy: "s1"),
            queued: [PendingRevocation(sessionToken: "s0")])
        let fresh = SessionLedger.freshInstallation(abandoning: previous, reason: .signedOut)
        #expect(fresh.installationID != previous.installationID)
        #expect(fresh.session == nil && fresh.device == nil)
        #expect(fresh.lastEndReason == .signedOut)
        #expect(
            fresh.pendingRevocations == [
                PendingRevocation(sessionToken: "s0"), PendingRevocation(sessionToken: "s1", deviceID: "d1"),
            ])
        #expect(SessionLedger.freshInstallation(abandoning: nil, reason: nil).pendingRevocations == [])
    }
}
