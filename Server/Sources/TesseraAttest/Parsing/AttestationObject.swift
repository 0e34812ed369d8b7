/// An App Attest attestation object: CBOR `{fmt: "apple-appattest", attStmt: {x5c, receipt}, authData}`.
struct AttestationObject: Hashable, Sendable {
    static let format = "apple-appattest"
    /// At most the leaf, the intermediate and a spare: Apple sends two.
    static let maxCertificates = 4

    /// `x5c`: the DER certificates, leaf first.
    let certificates: [[UInt8]]
    /// Apple's receipt (CMS), stored for fraud-risk queries; not verified here.
    let receipt: [UInt8]
    let authenticatorData: AuthenticatorData

    init(parsing bytes: [UInt8], limits: CBORLimits = .appAttest) throws(AppAttestError) {
        let object = try CBORReader.decode(bytes, limits: limits)
        guard case .map = object else { throw AppAttestError(.missingField) }
        guard let format = object[text: "fmt"]?.textString else { throw AppAttestError(.missingField) }
        guard format == Self.format else { throw AppAttestError(.unknownFormat) }
        guard let statement = object[text: "attStmt"], case .map = statement,
            case .array(let chain) = statement[text: "x5c"],
            let receipt = statement[text: "receipt"]?.byteString,
            let authData = object[text: "authData"]?.byteString
        else { throw AppAttestError(.missingField) }
        guard !chain.isEmpty, chain.count <= Self.maxCertificates else { throw AppAttestError(.missingField) }
        var certificates: [[UInt8]] = []
        for element in chain {
            guard let der = element.byteString, !der.isEmpty else { throw AppAttestError(.missingField) }
            certificates.append(der)
        }
        let authenticatorData = try AuthenticatorData(parsing: authData, limits: limits)
        guard authenticatorData.credential != nil else { throw AppAttestError(.missingCredentialData) }
        self.certificates = certificates
        self.receipt = receipt
        self.authenticatorData = authenticatorData
    }
}

/// An App Attest assertion: CBOR `{signature, authenticatorData}`.
struct AssertionObject: Hashable, Sendable {
    /// The DER ECDSA signature over SHA-256(authenticatorData ‖ clientDataHash).
    let signature: [UInt8]
    let authenticatorData: AuthenticatorData

    init(parsing bytes: [UInt8], limits: CBORLimits = .appAttest) throws(AppAttestError) {
        let object = try CBORReader.decode(bytes, limits: limits)
        guard case .map = object,
            let signature = object[text: "signature"]?.byteString,
            let authData = object[text: "authenticatorData"]?.byteString
        else { throw AppAttestError(.missingField) }
        self.signature = signature
        self.authenticatorData = try AuthenticatorData(parsing: authData, limits: limits)
    }
}
