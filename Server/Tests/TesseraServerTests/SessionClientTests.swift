import Foundation
import HTTPTypes
import TesseraTokens
import Testing

@testable import TesseraServer

/// A session's last client (address and user agent): written with the session, then only when it
/// changes, on both backends; shown on the profile page.
@Suite("Sessions' last clients")
struct SessionClientTests {
    static let phone = SessionClient(address: "203.0.113.7", userAgent: "Demo/1.0 (iPhone; iOS 19.1)")
    static let laptop = SessionClient(address: "198.51.100.2", userAgent: nil)

    @Test(
        "The store keeps the creating client, writes a new one only when it differs, and reads them by ID",
        arguments: StoreBackend.allCases)
    func store(backend: StoreBackend) async throws {
        let (environment, store, _, _) = try await TestEnvironment.makeUnpacked(backend: backend)
        let first = try await environment.storeStart(client: Self.phone).context
        let second = try await environment.storeStart().context
        let firstID = first.session.id
        let secondID = second.session.id
        #expect(try await store.sessionClients(ids: [firstID, secondID]) == [firstID: Self.phone])
        // The same client again writes no row; another, or a first one, does; an unknown session none.
        #expect(try await store.recordSessionClients([(firstID, Self.phone)]) == 0)
        #expect(
            try await store.recordSessionClients([
                (firstID, Self.laptop), (secondID, Self.phone), ("ses_unknown", Self.phone),
            ]) == 2)
        #expect(
            try await store.sessionClients(ids: [firstID, secondID]) == [firstID: Self.laptop, secondID: Self.phone])
        #expect(try await store.recordSessionClients([(firstID, Self.laptop), (secondID, Self.phone)]) == 0)
        #expect(try await store.sessionClients(ids: []) == [:])
    }

    @Test("A user agent is kept to 256 bytes, cut at a character's end")
    func truncated() {
        let long = String(repeating: "é", count: 200)  // 400 bytes
        let client = SessionClient(address: "unknown", userAgent: long)
        #expect(client.userAgent?.utf8.count == 256)
        #expect(client.userAgent == String(repeating: "é", count: 128))
        #expect(SessionClient(address: "x", userAgent: "short").userAgent == "short")
    }

    @Test("The recorder queues nothing while the client is the one it last saw; a change is written once")
    func recorder() async throws {
        let (environment, store, _, _) = try await TestEnvironment.makeUnpacked(backend: .sqlite)
        let recorder = SessionClientRecorder(store: store)
        let context = try await environment.storeStart(client: Self.phone).context
        let id = context.session.id
        recorder.created(sessionID: id, client: Self.phone)
        for _ in 0..<100 {
            recorder.saw(sessionID: id, address: Self.phone.address, userAgent: Self.phone.userAgent)
        }
        #expect(recorder.queued == 0, "heartbeats from the creating client queue nothing")
        for _ in 0..<10 {
            recorder.saw(sessionID: id, address: Self.laptop.address, userAgent: Self.laptop.userAgent)
        }
        #expect(recorder.queued == 1)
        try await recorder.flush()
        #expect(recorder.queued == 0)
        #expect(try await store.sessionClients(ids: [id]) == [id: Self.laptop])
        // A node that never saw the session (a restart, another node) queues its client once; the
        // store then writes no row, as it holds that client already.
        let other = SessionClientRecorder(store: store)
        other.saw(sessionID: id, address: Self.laptop.address, userAgent: Self.laptop.userAgent)
        other.saw(sessionID: id, address: Self.laptop.address, userAgent: Self.laptop.userAgent)
        #expect(other.queued == 1)
        try await other.flush()
        #expect(try await store.sessionClients(ids: [id]) == [id: Self.laptop])
    }

    @Test("A session started through the API carries its client; the profile page shows it")
    func profilePage() async throws {
        try await withConsole(role: .viewer) { environment, api, browser, _ in
            let installationID = UUID().uuidString.lowercased()
            let started = try await api.send(
                .post, "/v1/sessions/anonymous", bearer: api.publishableKey,
                body:
                    #"{"installation_id":"\#(installationID)","installation_secret":"\#(OpaqueToken.installationSecret())"}"#,
                headers: [.userAgent: "Demo/2.0 <script>"])
            let sessionID = try #require(started.sessionID)
            let profileID = try #require(started.profileID)
            let clients = try await environment.store.sessionClients(ids: [sessionID])
            #expect(clients[sessionID]?.userAgent == "Demo/2.0 <script>")
            let page = try await browser.get("/console/profile?id=\(profileID)")
            #expect(page.html.contains("Last client"))
            #expect(page.html.contains("Demo/2.0 &lt;script&gt;"))
        }
    }
}
