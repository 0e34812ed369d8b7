import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Attest attestations and assertions as Apple's guide describes, for a set of app IDs.
///
/// The client data hash is an input: Tessera's protocol fixes how it is computed (SHA-256 of the
/// challenge bytes for an attestation; SHA-256 of the challenge bytes ‖ the UTF-8 installation ID for
/// an assertion), while Apple's own sample attests the raw challenge bytes.
///
/// ```swift
/// let verifier = AppAttestVerifier(appIDs: ["TEAMID1234.com.example.app"], environment: .production)
/// let key = try await verifier.verifyAttestation(object, keyID: keyID, clientDataHash: hash, at: .now)
/// let counter = try verifier.verifyAssertion(
///     assertion, clientDataHash: hash2, publicKey: key.publicKey, previousCounter: key.counter)
/// ```
public struct AppAttestVerifier: Sendable {
    /// The OID of the leaf certificate's nonce extension, 1.2.840.113635.100.8.2.
    public static let nonceExtensionOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]

    /// The app IDs (`TEAMID.bundle.id`) whose keys are accepted.
    public let appIDs: [String]
    /// The environment whose AAGUID attestations must carry.
    public let environment: AppAttestEnvironment
    /// The roots chains must lead to (Apple's App Attestation Root CA unless a test says otherwise).
    public let trustAnchors: [Certificate]
    /// SHA-256 of each of ``appIDs``, in the same order.
    private let appIDHashes: [[UInt8]]
    private let rootStore: CertificateStore

    /// Creates a verifier.
    /// - Parameters:
    ///   - appIDs: the accepted app IDs, `TEAMID.bundle.id`.
    ///   - environment: the environment attestations must come from.
    ///   - trustAnchors: the trusted roots; Apple's App Attestation Root CA by default.
    public init(
        appIDs: [String],
        environment: AppAttestEnvironment,
        trustAnchors: [Certificate] = [AppAttestVerifier.appleRoot]
    ) {
        self.appIDs = appIDs
        self.environment = environment
        self.trustAnchors = trustAnchors
        self.appIDHashes = appIDs.map { Array(SHA256.hash(data: Array($0.utf8))) }
        self.rootStore = CertificateStore(trustAnchors)
    }

    /// Verifies an attestation object and returns the attested key to store for the installation.
    ///
    /// Checks, in order: the object's form (`format`), the chain to a trust anchor at `time` (`root`,
    /// `chain`), the nonce (`nonce`), the key ID, credential key and credential ID (`key_id`), `rpIdHash`
    /// (`app_id`), the counter 0 (`counter`) and the AAGUID (`environment`).
    /// - Parameters:
    ///   - attestationObject: the CBOR attestation object from `DCAppAttestService.attestKey`.
    ///   - keyID: the key identifier the client sent (32 bytes).
    ///   - clientDataHash: the client data hash the app passed to `attestKey`.
    ///   - time: the time at which every certificate of the chain must be valid.
    public func verifyAttestation(
        _ attestationObject: [UInt8],
        keyID: [UInt8],
        clientDataHash: [UInt8],
        at time: Date
    ) async throws(AppAttestError) -> AttestedKey {
        let object = try AttestationObject(parsing: attestationObject)
        var certificates: [Certificate] = []
        for der in object.certificates {
            do {
                certificates.append(try Certificate(derEncoded: der))
            } catch {
                throw AppAttestError(.malformedCertificate)
            }
        }
        let leaf = certificates[0]
        try await verifyChain(certificates, at: time)

        let authData = object.authenticatorData
        let expectedNonce = Array(SHA256.hash(data: authData.bytes + clientDataHash))
        guard AssertionCheck.constantTimeEqual(try Self.nonce(of: leaf), expectedNonce) else {
            throw AppAttestError(.nonceMismatch)
        }

        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else { throw AppAttestError(.malformedCertificate) }
        let publicKey = Array(leafKey.x963Representation)
        guard AssertionCheck.constantTimeEqual(Array(SHA256.hash(data: publicKey)), keyID) else {
            throw AppAttestError(.keyIDMismatch)
        }
        // The parser guarantees credential data for an attestation.
        guard let credential = authData.credential else { throw AppAttestError(.missingCredentialData) }
        guard credential.publicKey == publicKey else { throw AppAttestError(.credentialKeyMismatch) }
        guard credential.credentialID == keyID else { throw AppAttestError(.credentialIDMismatch) }

        let appID = try self.appID(of: authData)
        guard authData.counter == 0 else { throw AppAttestError(.counterNotZero) }
        guard let environment = AppAttestEnvironment(aaguid: credential.aaguid) else {
            throw AppAttestError(.unknownAAGUID)
        }
        guard environment == self.environment else { throw AppAttestError(.environmentMismatch) }

        return AttestedKey(
            keyID: keyID,
            publicKey: publicKey,
            environment: environment,
            appID: appID,
            counter: authData.counter,
            receipt: object.receipt
        )
    }

    /// Verifies an assertion made with a stored key and returns its counter, which the caller stores.
    ///
    /// Checks, in order: the object's form (`format`), the signature over
    /// SHA-256(authenticatorData ‖ clientDataHash) (`challenge`), `rpIdHash` (`app_id`) and a counter
    /// strictly greater than `previousCounter` (`counter`). The caller must store the new counter only
    /// if it still exceeds the stored one (a conditional update), so a replay on another node fails too.
    /// - Parameters:
    ///   - assertion: the CBOR assertion from `DCAppAttestService.generateAssertion`.
    ///   - clientDataHash: the client data hash the app passed to `generateAssertion`.
    ///   - publicKey: the stored key, an uncompressed P-256 point.
    ///   - previousCounter: the stored counter.
    public func verifyAssertion(
        _ assertion: [UInt8],
        clientDataHash: [UInt8],
        publicKey: [UInt8],
        previousCounter: UInt32
    ) throws(AppAttestError) -> UInt32 {
        try AssertionCheck.verify(
            assertion,
            clientDataHash: clientDataHash,
            publicKey: publicKey,
            rpIDHashes: appIDHashes,
            previousCounter: previousCounter
        ).counter
    }

    /// The app ID whose SHA-256 is the authenticator data's `rpIdHash`.
    private func appID(of authData: AuthenticatorData) throws(AppAttestError) -> String {
        appIDs[try AssertionCheck.index(of: authData.rpIDHash, in: appIDHashes)]
    }

    /// Validates the chain at `time`; tells an untrusted root (`root`) from a broken chain (`chain`).
    private func verifyChain(_ certificates: [Certificate], at time: Date) async throws(AppAttestError) {
        var verifier = Verifier(rootCertificates: rootStore) { RFC5280Policy(fixedExpiryValidationTime: time) }
        let result = await verifier.validate(
            leaf: certificates[0],
            intermediates: CertificateStore(certificates.dropFirst())
        )
        guard case .validCertificate = result else {
            // Only on failure: does any certificate of x5c carry a trust anchor's signature? If so the
            // chain reaches the root and something else broke it (time, signature, constraints).
            let reachesAnchor = certificates.contains { certificate in
                trustAnchors.contains {
                    certificate.issuer == $0.subject
                        && $0.publicKey.isValidSignature(certificate.signature, for: certificate)
                }
            }
            throw AppAttestError(reachesAnchor ? .invalidChain : .untrustedRoot)
        }
    }

    /// The nonce of the leaf's extension 1.2.840.113635.100.8.2, `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    static func nonce(of leaf: Certificate) throws(AppAttestError) -> [UInt8] {
        guard let nonceExtension = leaf.extensions[oid: nonceExtensionOID] else { throw AppAttestError(.missingNonce) }
        do {
            let node = try DER.parse(nonceExtension.value)
            return try DER.sequence(node, identifier: .sequence) { nodes in
                try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { node in
                    Array(try ASN1OctetString(derEncoded: node).bytes)
                }
            }
        } catch {
            throw AppAttestError(.malformedNonce)
        }
    }
}
