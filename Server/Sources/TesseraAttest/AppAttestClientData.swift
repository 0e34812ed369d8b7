import Crypto

/// How Tessera's protocol computes the client data hash an app passes to `DCAppAttestService`.
///
/// The verifier takes the hash as an input (Apple's own sample attests the raw challenge); Tessera's
/// SDK and server both compute it here, so the two cannot drift apart.
public enum AppAttestClientData {
    /// The client data hash of an attestation: SHA-256 of the challenge bytes.
    public static func attestationHash(challenge: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: challenge))
    }

    /// The client data hash of an assertion: SHA-256 of the challenge bytes ‖ the UTF-8 installation ID.
    ///
    /// Binding the installation ID means an assertion made for one installation cannot open another.
    public static func assertionHash(challenge: [UInt8], installationID: String) -> [UInt8] {
        Array(SHA256.hash(data: challenge + Array(installationID.utf8)))
    }
}
