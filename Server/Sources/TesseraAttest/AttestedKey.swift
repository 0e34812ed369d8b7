/// A key that passed attestation: what the server stores per installation to verify its assertions.
public struct AttestedKey: Hashable, Sendable {
    /// The key identifier, SHA-256 of ``publicKey`` (32 bytes).
    public var keyID: [UInt8]
    /// The credential public key as an uncompressed P-256 point (65 bytes, X9.63).
    public var publicKey: [UInt8]
    /// The environment the key was made in.
    public var environment: AppAttestEnvironment
    /// The app ID whose hash the authenticator data carries.
    public var appID: String
    /// The counter of the attestation (always 0); assertions must exceed the stored counter.
    public var counter: UInt32
    /// Apple's receipt, kept for fraud-risk queries (not verified).
    public var receipt: [UInt8]
}
