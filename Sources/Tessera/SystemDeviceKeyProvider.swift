import Crypto
public import Foundation

#if canImport(CryptoKit) && canImport(Security)
    import CryptoKit
    import Security
#endif

/// The default ``DeviceKeyProvider``: a Secure Enclave key where the device has one, a software
/// P-256 key otherwise (Linux, the simulator, Macs without a Secure Enclave).
///
/// It is a thin adapter: the SDK decides which tier to ask for and what to do when a key cannot be
/// restored. A Secure Enclave key is made usable after the first unlock (the heartbeat signs in the
/// background) and only on this device; its representation is an opaque reference that no other
/// device can use.
public struct SystemDeviceKeyProvider: DeviceKeyProvider {
    /// Creates the provider.
    public init() {}

    public func supports(_ tier: DeviceKeyTier) -> Bool {
        switch tier {
        case .software: return true
        case .secureEnclave:
            #if canImport(CryptoKit) && canImport(Security)
                return SecureEnclave.isAvailable
            #else
                return false
            #endif
        }
    }

    public func makeKey(tier: DeviceKeyTier) throws -> any DeviceKey {
        switch tier {
        case .software:
            return SoftwareDeviceKey(P256.Signing.PrivateKey())
        case .secureEnclave:
            #if canImport(CryptoKit) && canImport(Security)
                return try SecureEnclaveDeviceKey.make()
            #else
                throw DeviceKeyUnsupported()
            #endif
        }
    }

    public func restoreKey(tier: DeviceKeyTier, dataRepresentation: Data) throws -> any DeviceKey {
        switch tier {
        case .software:
            return SoftwareDeviceKey(try P256.Signing.PrivateKey(rawRepresentation: dataRepresentation))
        case .secureEnclave:
            #if canImport(CryptoKit) && canImport(Security)
                return try SecureEnclaveDeviceKey(dataRepresentation: dataRepresentation)
            #else
                throw DeviceKeyUnsupported()
            #endif
        }
    }
}

/// A key of a tier this device cannot make or use.
struct DeviceKeyUnsupported: Error {}

/// A software P-256 key; its raw representation is kept in the credential store.
struct SoftwareDeviceKey: DeviceKey {
    let key: P256.Signing.PrivateKey

    init(_ key: P256.Signing.PrivateKey) { self.key = key }

    var tier: DeviceKeyTier { .software }
    var publicKey: P256.Signing.PublicKey { key.publicKey }
    var dataRepresentation: Data { key.rawRepresentation }
    func signature(for data: Data) throws -> P256.Signing.ECDSASignature { try key.signature(for: data) }
}

#if canImport(CryptoKit) && canImport(Security)
    /// A Secure Enclave key: only its device-bound reference is held (and kept in the credential store);
    /// each signature asks the Secure Enclave.
    struct SecureEnclaveDeviceKey: DeviceKey {
        let dataRepresentation: Data
        let publicKey: P256.Signing.PublicKey

        static func make() throws -> SecureEnclaveDeviceKey {
            var error: Unmanaged<CFError>?
            guard
                let access = SecAccessControlCreateWithFlags(
                    nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .privateKeyUsage, &error)
            else { throw error?.takeRetainedValue() ?? DeviceKeyUnsupported() }
            let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
            return SecureEnclaveDeviceKey(dataRepresentation: key.dataRepresentation, publicKey: key.publicKey)
        }

        init(dataRepresentation: Data) throws {
            let key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: dataRepresentation)
            self.init(dataRepresentation: dataRepresentation, publicKey: key.publicKey)
        }

        private init(dataRepresentation: Data, publicKey: P256.Signing.PublicKey) {
            self.dataRepresentation = dataRepresentation
            self.publicKey = publicKey
        }

        var tier: DeviceKeyTier { .secureEnclave }

        func signature(for data: Data) throws -> P256.Signing.ECDSASignature {
            try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: dataRepresentation).signature(for: data)
        }
    }
#endif
