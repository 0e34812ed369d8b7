import Foundation

/// What a start or identify sends to prove it comes from the project's genuine app (App Attest),
/// as read from its body; bytes that do not decode are nil (judged by ``AppAttestGate``).
enum AppAttestEvidence: Sendable, Hashable {
    /// `attestation: {key_id, attestation_object, challenge}`: a new key for the installation.
    case attestation(keyID: [UInt8]?, object: [UInt8]?, challenge: [UInt8]?)
    /// `assertion: {key_id, assertion, challenge}`: signed with the installation's attested key.
    case assertion(keyID: [UInt8]?, assertion: [UInt8]?, challenge: [UInt8]?)
    /// `attestation: {unsupported: true}`: the device cannot attest (simulators, some Macs).
    case unsupported

    /// The bytes of standard base64 or base64url, padded or not; nil when they do not decode.
    static func bytes(base64 text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 16_384 else { return nil }
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        if !standard.hasSuffix("=") {
            standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        }
        return Data(base64Encoded: standard).map(Array.init)
    }

    /// A challenge as the server issued it: 32 bytes in base64url; nil otherwise.
    static func challenge(_ text: String) -> [UInt8]? {
        guard let bytes = bytes(base64: text), bytes.count == AppAttestGate.challengeBytes else { return nil }
        return bytes
    }
}
