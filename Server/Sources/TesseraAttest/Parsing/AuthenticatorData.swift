/// WebAuthn authenticator data as App Attest writes it (W3C WebAuthn §6.1).
///
/// `rpIdHash` (32) ‖ flags (1) ‖ counter (4, big-endian) ‖ attested credential data when the AT flag is
/// set and bytes follow ‖ extension data. Since iOS 27 the attestation's authenticator data carries a CBOR
/// extension map after the credential data while the ED flag is clear; any bytes after the credential
/// data are read as one CBOR map, flag or not. Assertions set AT but carry no credential data (37 bytes).
struct AuthenticatorData: Hashable, Sendable {
    static let attestedCredentialDataFlag: UInt8 = 0x40
    static let extensionDataFlag: UInt8 = 0x80

    /// The whole authenticator data, as signed (the nonce and the assertion signature cover all of it).
    let bytes: [UInt8]
    let rpIDHash: [UInt8]
    let flags: UInt8
    let counter: UInt32
    let credential: AttestedCredentialData?
    /// The extension map after the credential data, when there is one.
    let extensions: CBORValue?

    init(parsing bytes: [UInt8], limits: CBORLimits = .appAttest) throws(AppAttestError) {
        guard bytes.count >= 37 else { throw AppAttestError(.malformedAuthenticatorData) }
        guard bytes.count <= limits.maxInputBytes else { throw AppAttestError(.oversizedCBOR) }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        counter = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags & Self.attestedCredentialDataFlag != 0, offset < bytes.count {
            let (credential, end) = try AttestedCredentialData.read(bytes, from: offset, limits: limits)
            self.credential = credential
            offset = end
        } else {
            credential = nil
        }
        if offset < bytes.count {
            let (value, end) = try Self.readExtensions(bytes, from: offset, limits: limits)
            guard case .map = value, end == bytes.count else { throw AppAttestError(.malformedExtensions) }
            extensions = value
        } else {
            guard flags & Self.extensionDataFlag == 0 else { throw AppAttestError(.malformedExtensions) }
            extensions = nil
        }
    }

    private static func readExtensions(
        _ bytes: [UInt8],
        from offset: Int,
        limits: CBORLimits
    ) throws(AppAttestError) -> (CBORValue, Int) {
        do throws(AppAttestError) {
            return try CBORReader.decodePrefix(bytes, from: offset, limits: limits)
        } catch {
            throw error.kind == .malformedCBOR ? AppAttestError(.malformedExtensions) : error
        }
    }
}

/// The attested credential data of an attestation's authenticator data.
struct AttestedCredentialData: Hashable, Sendable {
    /// `appattestdevelop` or `appattest` followed by seven zero bytes.
    let aaguid: [UInt8]
    let credentialID: [UInt8]
    /// The credential public key as an uncompressed P-256 point (0x04 ‖ x ‖ y).
    let publicKey: [UInt8]

    /// Reads the credential data at `start`; returns it and the offset after its COSE key.
    static func read(
        _ bytes: [UInt8],
        from start: Int,
        limits: CBORLimits
    ) throws(AppAttestError) -> (AttestedCredentialData, Int) {
        guard bytes.count - start >= 18 else { throw AppAttestError(.malformedAuthenticatorData) }
        let aaguid = Array(bytes[start..<(start + 16)])
        let length = Int(bytes[start + 16]) << 8 | Int(bytes[start + 17])
        let idStart = start + 18
        // WebAuthn caps credential IDs at 1023 bytes; App Attest's are 32.
        guard length <= 1023, bytes.count - idStart >= length else { throw AppAttestError(.malformedAuthenticatorData) }
        let credentialID = Array(bytes[idStart..<(idStart + length)])
        let (key, end) = try CBORReader.decodePrefix(bytes, from: idStart + length, limits: limits)
        let credential = AttestedCredentialData(
            aaguid: aaguid,
            credentialID: credentialID,
            publicKey: try Self.uncompressedPoint(ofCOSEKey: key)
        )
        return (credential, end)
    }

    /// The uncompressed point of an EC2 P-256 COSE key (kty 2, alg −7 when present, crv 1, x and y of 32 bytes).
    static func uncompressedPoint(ofCOSEKey key: CBORValue) throws(AppAttestError) -> [UInt8] {
        guard key[int: 1]?.integer == 2, key[int: -1]?.integer == 1,
            let x = key[int: -2]?.byteString, x.count == 32,
            let y = key[int: -3]?.byteString, y.count == 32
        else { throw AppAttestError(.malformedCredentialKey) }
        if let algorithm = key[int: 3], algorithm.integer != -7 { throw AppAttestError(.malformedCredentialKey) }
        return [0x04] + x + y
    }
}
