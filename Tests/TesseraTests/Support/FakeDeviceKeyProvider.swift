import Crypto
import Foundation

@testable import Tessera

/// A ``DeviceKeyProvider`` for tests: software keys that claim either tier, and faults to inject (a
/// device without a Secure Enclave, one that refuses to make a key, keys that cannot be restored).
final class FakeDeviceKeyProvider: DeviceKeyProvider {
    struct Faults: Sendable {
        var hasSecureEnclave = true
        var secureEnclaveRefuses = false
        var restoreFails = false
    }

    struct Key: DeviceKey {
        let key: P256.Signing.PrivateKey
        let tier: DeviceKeyTier
        var publicKey: P256.Signing.PublicKey { key.publicKey }
        var dataRepresentation: Data { key.rawRepresentation }
        func signature(for data: Data) throws -> P256.Signing.ECDSASignature { try key.signature(for: data) }
    }

    struct Refused: Error {}

    let faults: Locked<Faults>
    let made = Locked<[DeviceKeyTier]>([])

    init(_ faults: Faults = Faults()) { self.faults = Locked(faults) }

    func supports(_ tier: DeviceKeyTier) -> Bool {
        tier == .software || faults.withLock { $0.hasSecureEnclave }
    }

    func makeKey(tier: DeviceKeyTier) throws -> any DeviceKey {
        if tier == .secureEnclave, faults.withLock({ !$0.hasSecureEnclave || $0.secureEnclaveRefuses }) {
            throw Refused()
        }
        made.withLock { $0.append(tier) }
        return Key(key: P256.Signing.PrivateKey(), tier: tier)
    }

    func restoreKey(tier: DeviceKeyTier, dataRepresentation: Data) throws -> any DeviceKey {
        if faults.withLock({ $0.restoreFails }) { throw Refused() }
        return Key(key: try P256.Signing.PrivateKey(rawRepresentation: dataRepresentation), tier: tier)
    }
}

/// A credential store that refuses one key (the device key's, by default) while `failing` is set.
final class KeyFaultStore: CredentialStore {
    let inner = InMemoryCredentialStore()
    let failing = Locked<CredentialStoreError?>(nil)
    let faultyKey: String

    init(faultyKey: String = "tessera-device-key") { self.faultyKey = faultyKey }

    private func check(_ key: String) throws(CredentialStoreError) {
        if key == faultyKey, let error = failing.withLock({ $0 }) { throw error }
    }

    func load(_ key: String) throws(CredentialStoreError) -> Data? {
        try check(key)
        return try inner.load(key)
    }

    func save(_ data: Data, for key: String) throws(CredentialStoreError) {
        try check(key)
        try inner.save(data, for: key)
    }

    func remove(_ key: String) throws(CredentialStoreError) {
        try check(key)
        try inner.remove(key)
    }
}
