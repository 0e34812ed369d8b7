// Median time of TesseraClient.start() restoring a persisted session WITHOUT network.
//
// "Without network" here means: the state file (AES-256-GCM, EncryptedFileStore on disk) holds a session
// the server confirmed less than one heartbeat interval ago, so start() restores and publishes it and
// starts the heartbeat without any request; the transport counts calls and the run fails if it is ever
// called. (A restored session older than one interval is validated by the heartbeat in the background;
// start() never waits for that request either.) The reference, measured in the same run, is the time to
// read + decrypt the store file and parse its JSON alone.

import Foundation
import Tessera
import TesseraTokens

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let runs = 300
let clock = ManualClock(now: Date())
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-start-bench-\(UUID())")
defer { try? FileManager.default.removeItem(at: directory) }
let store = EncryptedFileStore(directory: directory)
let calls = ManagedCounter()

final class ManagedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

func format(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle()) }

// Seeding: one start() against a canned anonymous-session answer.
let keyRing = try SessionKeyRing(signingKey: .generate(kid: "bench"))
let seedTransport: TesseraConfiguration.Transport = { request in
    let now = clock.now()
    let jwt = keyRing.sign(
        SessionClaims(
            issuer: "http://bench", audience: "prj_bench", subject: "usr_bench", sessionID: "ses_bench",
            expiration: now.addingTimeInterval(300), issuedAt: now, notBefore: now, kind: "anonymous",
            externalID: nil))
    let body: [String: Any] = [
        "session": [
            "id": "ses_bench", "profile_id": "usr_bench", "installation_id": NSNull(), "created_at": format(now),
            "last_authenticated_at": format(now), "expires_at": format(now.addingTimeInterval(30 * 86400)),
        ],
        "session_token": "st_" + String(repeating: "a", count: 43), "session_jwt": jwt,
        "profile": [
            "id": "usr_bench", "kind": "anonymous", "external_id": NSNull(), "verified": false, "name": NSNull(),
            "avatar_url": NSNull(), "email": NSNull(), "created_at": format(now), "updated_at": format(now),
        ],
        "capabilities": ["authenticated": false, "kind": "anonymous"], "server_time": format(now),
    ]
    let response = HTTPURLResponse(url: request.url!, statusCode: 201, httpVersion: nil, headerFields: nil)!
    return (try JSONSerialization.data(withJSONObject: body), response)
}
let noNetwork: TesseraConfiguration.Transport = { _ in
    calls.increment()
    throw URLError(.notConnectedToInternet)
}

func configuration(_ transport: @escaping TesseraConfiguration.Transport) -> TesseraConfiguration {
    TesseraConfiguration(
        serverURL: URL(string: "http://127.0.0.1:9")!, publishableKey: "pk_bench", credentialStore: store,
        transport: transport, clock: clock, observesApplicationLifecycle: false)
}

let seed = TesseraClient(configuration: configuration(seedTransport))
try await seed.start()
await seed.stop()

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

var startTimes: [Double] = []
var referenceTimes: [Double] = []
let wall = ContinuousClock()
for _ in 0..<runs {
    let client = TesseraClient(configuration: configuration(noNetwork))
    let elapsed = try await wall.measure { try await client.start() }
    await client.stop()
    guard client.sessionState.value?.id == "ses_bench" else { fatalError("session not restored") }
    startTimes.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)

    let reference = try wall.measure {
        let data = try store.load("tessera")!
        _ = try JSONSerialization.jsonObject(with: data)
    }
    referenceTimes.append(
        Double(reference.components.attoseconds) / 1e15 + Double(reference.components.seconds) * 1000)
}

print("TesseraStartBenchmark: start() restoring a persisted session from an EncryptedFileStore, no network")
print("  meaning of 'no network': session validated < 1 interval ago, transport never called (calls: \(calls.count))")
print(String(format: "  runs: %d", runs))
print(
    String(format: "  start() median: %.3f ms  (p90 %.3f ms)", median(startTimes), startTimes.sorted()[runs * 9 / 10]))
print(
    String(
        format: "  reference (read + decrypt + JSON parse of the store file) median: %.3f ms", median(referenceTimes)))
print("  target: median < 5 ms → \(median(startTimes) < 5 ? "met" : "NOT met")")
if calls.count != 0 { fatalError("the transport was called") }
