public import Foundation

/// Apple's App Attest as the SDK uses it: a key per installation, its attestation, and assertions.
///
/// ``SystemAppAttestProvider`` wraps `DCAppAttestService` on Apple platforms; tests inject their own.
/// The SDK decides everything else: when to attest or assert, where the key ID is kept (the
/// credential store, beside the installation), how `clientDataHash` is computed from the server's
/// challenge, and what a failure becomes (see <doc:AppAttest>). Throw an ``AppAttestError``; any other
/// error counts as ``AppAttestError/failed(_:)``.
public protocol AppAttestProvider: Sendable {
    /// Whether this device can attest (`DCAppAttestService.isSupported`): false on simulators and
    /// some Macs, where the SDK sends `{"unsupported": true}` instead.
    var isSupported: Bool { get }
    /// Makes a new key in the Secure Enclave and answers its key ID (base64 of the SHA-256 of its public key).
    func generateKey() async throws -> String
    /// Has Apple attest the key: answers the attestation object (CBOR).
    /// - Parameters:
    ///   - keyID: A key ID ``generateKey()`` answered.
    ///   - clientDataHash: The SHA-256 the attestation covers.
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// Signs `clientDataHash` with the attested key: answers the assertion (CBOR).
    /// - Parameters:
    ///   - keyID: The attested key's ID.
    ///   - clientDataHash: The SHA-256 the assertion covers.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// Why the device could not attest or assert.
public enum AppAttestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key cannot be used any more (`DCError.invalidKey`): typically restored from a backup onto
    /// another device. The SDK attests a new key once.
    case invalidKey
    /// The device cannot attest (`DCError.featureUnsupported`): reported as unsupported.
    case featureUnsupported
    /// Apple's service could not be reached (`DCError.serverUnavailable`): transient; the SDK keeps the
    /// key and tries again at the next start that needs it.
    case serverUnavailable
    /// Any other failure (`DCError.invalidInput`, `DCError.unknownSystemFailure`, …), with what is known.
    case failed(String)

    public var description: String {
        switch self {
        case .invalidKey: return "invalid key"
        case .featureUnsupported: return "feature unsupported"
        case .serverUnavailable: return "Apple's App Attest service unavailable"
        case .failed(let message): return "failed: \(message)"
        }
    }

    /// Maps any error a provider threw.
    static func wrapping(_ error: any Error) -> AppAttestError {
        if let error = error as? AppAttestError { return error }
        return .failed(String(describing: type(of: error)))
    }
}

/// The provider of platforms without App Attest (Linux, Windows): it cannot attest.
struct UnavailableAppAttestProvider: AppAttestProvider {
    var isSupported: Bool { false }
    func generateKey() async throws -> String { throw AppAttestError.featureUnsupported }
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        throw AppAttestError.featureUnsupported
    }
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        throw AppAttestError.featureUnsupported
    }
}
