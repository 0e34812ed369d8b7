public import Foundation

/// Makes this installation's ``DeviceKey`` and gets it back from its stored representation.
///
/// The SDK decides everything else: which tier to ask for, where the representation is kept, and what
/// happens when a stored key is missing or cannot be restored. ``SystemDeviceKeyProvider`` is the
/// default; tests inject their own.
public protocol DeviceKeyProvider: Sendable {
    /// Whether this device can make keys of `tier` now.
    /// - Parameter tier: The tier.
    func supports(_ tier: DeviceKeyTier) -> Bool
    /// Makes a new key of `tier`.
    /// - Parameter tier: The tier (one ``supports(_:)`` accepted).
    func makeKey(tier: DeviceKeyTier) throws -> any DeviceKey
    /// Gets a key back from the representation kept at the previous launch.
    /// - Parameters:
    ///   - tier: The tier the key was made in.
    ///   - dataRepresentation: The key's ``DeviceKey/dataRepresentation``.
    /// - Throws: When the key cannot be used on this device any more (a Secure Enclave key restored from a
    ///   backup onto another device, damaged bytes): the SDK then makes a new key.
    func restoreKey(tier: DeviceKeyTier, dataRepresentation: Data) throws -> any DeviceKey
}
