import Foundation

@testable import Tessera

/// An ``AppAttestProvider`` for tests: keys that live in memory, attestation objects and assertions
/// in a JSON form the ``FakeServer`` checks (the key ID, the client data hash, the counter), and faults
/// to inject: a device that cannot attest, failures queued per call, keys the device calls invalid.
final class FakeAppAttestProvider: AppAttestProvider {
    struct Faults: Sendable {
        var isSupported = true
        /// Thrown by the next calls, one each, in order.
        var generateKey: [AppAttestError] = []
        var attestKey: [AppAttestError] = []
        var generateAssertion: [AppAttestError] = []
    }

    let faults: Locked<Faults>
    /// Every call, in order: `generateKey`, `attestKey KEY`, `generateAssertion KEY`.
    let calls = Locked<[String]>([])
    private let keys = Locked<[String: Int]>([:])
    private let invalid = Locked<Set<String>>([])

    init(_ faults: Faults = Faults()) { self.faults = Locked(faults) }

    var isSupported: Bool { faults.withLock { $0.isSupported } }

    /// Every key made so far becomes unusable, as after a backup restored onto another device.
    func invalidateKeys() { invalid.withLock { $0.formUnion(keys.withLock { Set($0.keys) }) } }

    func generateKey() async throws -> String {
        calls.withLock { $0.append("generateKey") }
        if let fault = faults.withLock({ $0.generateKey.isEmpty ? nil : $0.generateKey.removeFirst() }) { throw fault }
        return keys.withLock { keys in
            let id = "key-\(keys.count + 1)"
            keys[id] = 0
            return id
        }
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        calls.withLock { $0.append("attestKey \(keyID)") }
        if let fault = faults.withLock({ $0.attestKey.isEmpty ? nil : $0.attestKey.removeFirst() }) { throw fault }
        guard keys.withLock({ $0[keyID] != nil }), !invalid.withLock({ $0.contains(keyID) }) else {
            throw AppAttestError.invalidKey
        }
        return try JSONSerialization.data(withJSONObject: [
            "key_id": keyID, "hash": clientDataHash.base64EncodedString(),
        ])
    }

    /// Called at each `generateAssertion`, before it answers.
    let onAssertion = Locked<(@Sendable () -> Void)?>(nil)

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        calls.withLock { $0.append("generateAssertion \(keyID)") }
        onAssertion.withLock { $0 }?()
        if let fault = faults.withLock({ $0.generateAssertion.isEmpty ? nil : $0.generateAssertion.removeFirst() }) {
            throw fault
        }
        guard !invalid.withLock({ $0.contains(keyID) }),
            let counter = keys.withLock({ keys -> Int? in
                guard let counter = keys[keyID] else { return nil }
                keys[keyID] = counter + 1
                return counter + 1
            })
        else { throw AppAttestError.invalidKey }
        return try JSONSerialization.data(withJSONObject: [
            "key_id": keyID, "hash": clientDataHash.base64EncodedString(), "counter": counter,
        ])
    }
}
