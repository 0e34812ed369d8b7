// The cost of App Attest verification on this host, beside a bare P-256 (and P-384) verify measured in
// the same run: attestation (Apple's iOS 27 sample: CBOR, chain of a P-256 leaf under Apple's P-384 CA,
// nonce, key checks) and assertion (bas-d's: CBOR, ES256, rpIdHash, counter).
//
//   swift run -c release --package-path Server AppAttestBenchmark [iterations]
//
// Prints p50 and p99 of each in microseconds, of wall-clock time and of the process's CPU time (the
// benchmark is single-threaded, so CPU time is its own work even on a loaded host, where the wall-clock
// p99 mostly measures waiting for a core). Targets: attestation ≤ 5 ms p99, assertion ≤ 0.3 ms p99.
import Crypto
import Foundation
import TesseraAttest

struct Vector: Decodable {
    var appId: String
    var environment: String?
    var keyIdB64: String?
    var publicKeyX963B64: String
    var clientDataHashB64: String
    var attestationObjectB64: String?
    var verifyAt: String?
    var assertionB64: String?
    var previousCounter: UInt32?
}

let folder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/Vectors/app-attest")

func load(_ name: String) throws -> Vector {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return try decoder.decode(Vector.self, from: Data(contentsOf: folder.appendingPathComponent(name)))
}

func bytes(_ base64: String?) -> [UInt8] { Array(Data(base64Encoded: base64 ?? "") ?? Data()) }

/// Nanoseconds of CPU this process has used (the benchmark runs on one thread, so this is its work,
/// whatever else the host runs).
func processCPUNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// Times `body` `iterations` times (after a tenth as many warm-up calls); returns sorted wall-clock and
/// CPU nanoseconds.
func measure(_ iterations: Int, _ body: () async throws -> Void) async rethrows -> (wall: [Int64], cpu: [Int64]) {
    for _ in 0..<max(1, iterations / 10) { try await body() }
    let clock = ContinuousClock()
    var wall: [Int64] = []
    var cpu: [Int64] = []
    wall.reserveCapacity(iterations)
    cpu.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let startCPU = processCPUNanoseconds()
        let start = clock.now
        try await body()
        let elapsed = clock.now - start
        cpu.append(processCPUNanoseconds() - startCPU)
        wall.append(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
    return (wall.sorted(), cpu.sorted())
}

func report(_ name: String, _ samples: (wall: [Int64], cpu: [Int64])) {
    func micros(_ nanoseconds: Int64) -> String { String(format: "%8.1f", Double(nanoseconds) / 1000) }
    func percentile(_ sorted: [Int64], _ p: Int) -> Int64 { sorted[min(sorted.count - 1, sorted.count * p / 100)] }
    let label = name.padding(toLength: 20, withPad: " ", startingAt: 0)
    print(
        "\(label) wall p50 \(micros(percentile(samples.wall, 50))) p99 \(micros(percentile(samples.wall, 99)))"
            + "   cpu p50 \(micros(percentile(samples.cpu, 50))) p99 \(micros(percentile(samples.cpu, 99)))"
            + "   (µs, n=\(samples.wall.count))"
    )
}

let iterations = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 2000

let attestation = try load("apple-guide-ios27-attestation.json")
let attestationVerifier = AppAttestVerifier(appIDs: [attestation.appId], environment: .production)
let attestationObject = bytes(attestation.attestationObjectB64)
let keyID = bytes(attestation.keyIdB64)
let attestationHash = bytes(attestation.clientDataHashB64)
guard let attestationTime = ISO8601DateFormatter().date(from: attestation.verifyAt ?? "") else {
    fatalError("apple-guide-ios27-attestation.json has no verifyAt")
}

let assertion = try load("bas-d-assertion.json")
let assertionVerifier = AppAttestVerifier(appIDs: [assertion.appId], environment: .development)
let assertionObject = bytes(assertion.assertionB64)
let assertionKey = bytes(assertion.publicKeyX963B64)
let assertionHash = bytes(assertion.clientDataHashB64)
let previous = assertion.previousCounter ?? 0

let p256 = P256.Signing.PrivateKey()
let p256Message = Array(SHA256.hash(data: Array("bare".utf8)))
let p256Signature = try p256.signature(for: p256Message)
let p256Public = p256.publicKey
let p384 = P384.Signing.PrivateKey()
let p384Signature = try p384.signature(for: p256Message)
let p384Public = p384.publicKey

print("App Attest verification, \(iterations) iterations each (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
var sink = 0
report(
    "bare P-256 verify",
    await measure(iterations * 5) { if p256Public.isValidSignature(p256Signature, for: p256Message) { sink += 1 } }
)
report(
    "bare P-384 verify",
    await measure(iterations) { if p384Public.isValidSignature(p384Signature, for: p256Message) { sink += 1 } }
)
report(
    "assertion",
    try await measure(iterations * 5) {
        sink += Int(
            try assertionVerifier.verifyAssertion(
                assertionObject,
                clientDataHash: assertionHash,
                publicKey: assertionKey,
                previousCounter: previous
            )
        )
    }
)
report(
    "attestation",
    try await measure(iterations) {
        let key = try await attestationVerifier.verifyAttestation(
            attestationObject,
            keyID: keyID,
            clientDataHash: attestationHash,
            at: attestationTime
        )
        sink += key.publicKey.count
    }
)
precondition(sink > 0)
