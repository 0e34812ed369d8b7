/// A refusal of an App Attest attestation or assertion, with the wire `reason` and the exact check that failed.
///
/// ``reason`` is what crosses the wire (`error.reason` of `attestation_invalid`); ``kind`` names the
/// check precisely, for logs and tests. Neither repeats any byte of the refused object.
public struct AppAttestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The check that failed.
    public let kind: Kind

    /// The wire reason of the failed check.
    public var reason: Reason { kind.reason }

    /// Creates an error for a failed check.
    public init(_ kind: Kind) {
        self.kind = kind
    }

    public var description: String { "App Attest refused (\(reason.rawValue)): \(kind.code)" }
}

extension AppAttestError {
    /// The reason of a refusal as the contract names it (`error.reason`); open, so codes can be added.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        // Not `init(rawValue:)`: OpenAPIContractTests reads every `rawValue: "…"` under Server/Sources
        // as a wire error code, and these are reasons, not codes.
        init(_ reason: String) { self.rawValue = reason }
        public var description: String { rawValue }

        /// The object is not a well-formed App Attest object (CBOR, fields, sizes, `fmt`).
        public static let format = Reason("format")
        /// The certificate chain does not verify (signatures, validity at the time, constraints).
        public static let chain = Reason("chain")
        /// The chain does not lead to a trusted root (Apple's App Attestation Root CA).
        public static let root = Reason("root")
        /// The leaf's nonce extension is missing or differs from SHA-256(authData ‖ clientDataHash).
        public static let nonce = Reason("nonce")
        /// The key ID, the credential ID or the credential key does not match the leaf's key.
        public static let keyID = Reason("key_id")
        /// `rpIdHash` is the hash of none of the accepted app IDs.
        public static let appID = Reason("app_id")
        /// The counter is not 0 (attestation) or does not exceed the stored one (assertion).
        public static let counter = Reason("counter")
        /// The AAGUID is not the one of the expected environment.
        public static let environment = Reason("environment")
        /// The assertion does not sign this challenge (its signature fails over the client data hash).
        public static let challenge = Reason("challenge")
    }

    /// The precise check that failed; each kind maps to one ``Reason``.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// A stable snake_case name of the check.
        public let code: String
        /// The wire reason this check reports.
        public let reason: Reason

        init(_ code: String, _ reason: Reason) {
            self.code = code
            self.reason = reason
        }

        public var description: String { code }

        // format
        /// The CBOR is truncated, has trailing bytes, an unsupported or ill-formed item, or duplicate map keys.
        public static let malformedCBOR = Kind("malformed_cbor", .format)
        /// The CBOR exceeds a limit: input size, nesting depth, string length, container or item count.
        public static let oversizedCBOR = Kind("oversized_cbor", .format)
        /// `fmt` is not `apple-appattest`.
        public static let unknownFormat = Kind("unknown_format", .format)
        /// A required field is missing or of the wrong type.
        public static let missingField = Kind("missing_field", .format)
        /// The authenticator data is too short or its attested credential data is cut.
        public static let malformedAuthenticatorData = Kind("malformed_authenticator_data", .format)
        /// An attestation's authenticator data carries no attested credential data.
        public static let missingCredentialData = Kind("missing_credential_data", .format)
        /// The credential public key is not a P-256 COSE key.
        public static let malformedCredentialKey = Kind("malformed_credential_key", .format)
        /// Bytes after the credential data are not exactly one CBOR map.
        public static let malformedExtensions = Kind("malformed_extensions", .format)
        /// A certificate of `x5c` does not parse, or the leaf's key is not P-256.
        public static let malformedCertificate = Kind("malformed_certificate", .format)
        /// The assertion's signature is not a DER ECDSA signature.
        public static let malformedSignature = Kind("malformed_signature", .format)
        /// The stored public key is not a P-256 point.
        public static let malformedPublicKey = Kind("malformed_public_key", .format)

        // root, chain
        /// No certificate of the chain is issued by a trusted root.
        public static let untrustedRoot = Kind("untrusted_root", .root)
        /// The chain to a trusted root does not verify at the given time.
        public static let invalidChain = Kind("invalid_chain", .chain)

        // nonce
        /// The leaf has no extension 1.2.840.113635.100.8.2.
        public static let missingNonce = Kind("missing_nonce", .nonce)
        /// The nonce extension is not `SEQUENCE { [1] OCTET STRING }`.
        public static let malformedNonce = Kind("malformed_nonce", .nonce)
        /// The nonce differs from SHA-256(authData ‖ clientDataHash).
        public static let nonceMismatch = Kind("nonce_mismatch", .nonce)

        // key_id
        /// The key ID is not SHA-256 of the leaf's public key.
        public static let keyIDMismatch = Kind("key_id_mismatch", .keyID)
        /// The credential ID of the authenticator data is not the key ID.
        public static let credentialIDMismatch = Kind("credential_id_mismatch", .keyID)
        /// The credential public key of the authenticator data is not the leaf's key.
        public static let credentialKeyMismatch = Kind("credential_key_mismatch", .keyID)

        // app_id
        /// `rpIdHash` is SHA-256 of none of the accepted app IDs.
        public static let appIDMismatch = Kind("app_id_mismatch", .appID)

        // counter
        /// An attestation's counter is not 0.
        public static let counterNotZero = Kind("counter_not_zero", .counter)
        /// An assertion's counter does not exceed the stored one.
        public static let counterNotIncreasing = Kind("counter_not_increasing", .counter)

        // environment
        /// The AAGUID is neither `appattestdevelop` nor `appattest` followed by seven zero bytes.
        public static let unknownAAGUID = Kind("unknown_aaguid", .environment)
        /// The AAGUID is the other environment's.
        public static let environmentMismatch = Kind("environment_mismatch", .environment)

        // challenge
        /// The assertion's signature does not verify over SHA-256(authData ‖ clientDataHash).
        public static let signatureInvalid = Kind("signature_invalid", .challenge)
    }
}
