public import Crypto
public import Foundation

/// Where a device key lives: in the Secure Enclave, which never lets it out, or in software.
public enum DeviceKeyTier: String, Sendable, Hashable, Codable {
    /// A P-256 key made by and kept in the Secure Enclave; the app only ever holds an opaque,
    /// device-bound reference to it.
    case secureEnclave = "secure_enclave"
    /// A P-256 key in memory, kept in the credential store between launches.
    case software
}

/// A P-256 key of this installation that signs the proof sent with every request, so that a session
/// token copied off the device is refused without it.
///
/// The SDK makes one per installation through a ``DeviceKeyProvider`` and keeps its
/// ``dataRepresentation`` in the credential store. Implement it only to put the key somewhere the
/// built-in provider does not reach.
public protocol DeviceKey: Sendable {
    /// Where the key lives.
    var tier: DeviceKeyTier { get }
    /// The public key, sent in every proof.
    var publicKey: P256.Signing.PublicKey { get }
    /// What the SDK keeps in the credential store to get the key back at the next launch: the raw private
    /// key of a software key, an opaque blob that only this device's Secure Enclave can use otherwise.
    var dataRepresentation: Data { get }
    /// An ECDSA P-256 signature over SHA-256 of `data`.
    /// - Parameter data: The bytes to sign.
    func signature(for data: Data) throws -> P256.Signing.ECDSASignature
}
