import Crypto

/// The checks of an assertion, which need a stored key but no certificate (so the fuzz target runs them).
enum AssertionCheck {
    /// Verifies an assertion; returns its counter and the index in `rpIDHashes` of its `rpIdHash`.
    ///
    /// Order: form (`format`), the ES256 signature over SHA-256(authenticatorData ‖ clientDataHash)
    /// (`challenge`), `rpIdHash` (`app_id`), a counter above `previousCounter` (`counter`).
    static func verify(
        _ assertion: [UInt8],
        clientDataHash: [UInt8],
        publicKey: [UInt8],
        rpIDHashes: [[UInt8]],
        previousCounter: UInt32
    ) throws(AppAttestError) -> (counter: UInt32, appIndex: Int) {
        let object = try AssertionObject(parsing: assertion)
        let key: P256.Signing.PublicKey
        do {
            key = try P256.Signing.PublicKey(x963Representation: publicKey)
        } catch {
            throw AppAttestError(.malformedPublicKey)
        }
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try P256.Signing.ECDSASignature(derRepresentation: object.signature)
        } catch {
            throw AppAttestError(.malformedSignature)
        }
        let authData = object.authenticatorData
        let nonce = SHA256.hash(data: authData.bytes + clientDataHash)
        guard key.isValidSignature(signature, for: Array(nonce)) else { throw AppAttestError(.signatureInvalid) }
        let appIndex = try index(of: authData.rpIDHash, in: rpIDHashes)
        guard authData.counter > previousCounter else { throw AppAttestError(.counterNotIncreasing) }
        return (authData.counter, appIndex)
    }

    /// The index of `rpIDHash` in `rpIDHashes`, or ``AppAttestError/Kind/appIDMismatch``.
    static func index(of rpIDHash: [UInt8], in rpIDHashes: [[UInt8]]) throws(AppAttestError) -> Int {
        guard let index = rpIDHashes.firstIndex(where: { constantTimeEqual($0, rpIDHash) }) else {
            throw AppAttestError(.appIDMismatch)
        }
        return index
    }

    /// Compares two byte strings in time that depends only on their lengths.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
