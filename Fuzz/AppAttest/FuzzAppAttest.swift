import Crypto
import Foundation

// Fuzzes TesseraAttest's parsing (the `Parsing` symlink: the bounded CBOR reader, the attestation
// object, authenticator data, the assertion and its signature check). The first byte picks the mode:
//   0  raw CBOR: CBORReader, with a write-back round trip
//   1  an attestation object: AttestationObject(parsing:)
//   2  an assertion checked with the key of the vendored bas-d vector (a real one is in the corpus)
//   3  authenticator data that the target signs itself with a fixed key, so the signature holds and
//      the parsing, rpIdHash and counter rules decide alone

/// Stops the run with a message; libFuzzer reports the abort as a crash and saves the input.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, line: UInt = #line) {
    guard !condition() else { return }
    FileHandle.standardError.write(Data("INVARIANT VIOLATED (line \(line)): \(message())\n".utf8))
    abort()
}

enum Fixture {
    /// The key, client data hash and app ID of `Server/Tests/Vectors/app-attest/bas-d-assertion.json`.
    static let realKey = Array(
        Data(
            base64Encoded:
                "BDfEBPorv4+89O5wgFc9X6gMT2zDoi99tDr5LDlOfNHIgMlatCKXJiXo5nOvG9orCWZU6bYCiVYB+SW7WUHFMII="
        )!
    )
    static let realClientDataHash = Array(Data(base64Encoded: "oWKXelNER2Bj4e72mbWqmouIx5H0yB8Kqv8paf5e4Ek=")!)
    static let realAppHash = Array(SHA256.hash(data: Array("35MFYY2JY5.co.chiff.attestation-test".utf8)))
    /// The signing key of mode 3, from a fixed scalar (bytes 1…32).
    static let key = try! P256.Signing.PrivateKey(rawRepresentation: (1...32).map { UInt8($0) })
    static let appHashes = [Array(SHA256.hash(data: Array("TEAMID1234.dev.tessera.fuzz".utf8))), realAppHash]
    static let clientDataHash = Array(SHA256.hash(data: Array("fuzz".utf8)))
    static let previousCounter: UInt32 = 7
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppAttest(_ data: UnsafeRawPointer?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    let rest = Array(bytes.dropFirst())
    switch bytes[0] % 4 {
    case 0: fuzzCBOR(rest)
    case 1: fuzzAttestationObject(rest)
    case 2: fuzzRealAssertion(rest)
    default: fuzzSignedAuthenticatorData(rest)
    }
    return 0
}

/// The deepest nesting, largest container and longest string of a value.
func measure(_ value: CBORValue, depth: Int = 1) -> (depth: Int, count: Int, string: Int) {
    switch value {
    case .bytes(let bytes): return (depth, 0, bytes.count)
    case .text(let text): return (depth, 0, text.utf8.count)
    case .array(let elements):
        return elements.map { measure($0, depth: depth + 1) }.reduce((depth, elements.count, 0)) {
            (max($0.0, $1.0), max($0.1, $1.1), max($0.2, $1.2))
        }
    case .map(let entries):
        return entries.flatMap { [$0.key, $0.value] }.map { measure($0, depth: depth + 1) }
            .reduce((depth, entries.count, 0)) { (max($0.0, $1.0), max($0.1, $1.1), max($0.2, $1.2)) }
    case .tagged(_, let inner): return measure(inner, depth: depth + 1)
    default: return (depth, 0, 0)
    }
}

func requireFormatError(_ error: AppAttestError, _ what: String) {
    require(error.reason == .format, "\(what) refused with \(error.kind), reason \(error.reason), not format")
}

func fuzzCBOR(_ input: [UInt8]) {
    let limits = CBORLimits.appAttest
    do throws(AppAttestError) {
        let (value, end) = try CBORReader.decodePrefix(input, from: 0)
        require(end > 0 && end <= input.count, "prefix end \(end) outside 1…\(input.count)")
        let whole = try? CBORReader.decode(Array(input[..<end]))
        require(whole == value, "the prefix alone reads differently")
        let shape = measure(value)
        require(shape.depth <= limits.maxDepth, "depth \(shape.depth) over the limit")
        require(shape.count <= limits.maxContainerCount, "container of \(shape.count) over the limit")
        require(shape.string <= limits.maxStringBytes, "string of \(shape.string) bytes over the limit")
        let written = CBORWriter.encode(value)
        require(written.count <= end, "the shortest form (\(written.count)) is longer than the input (\(end))")
        let reread = try? CBORReader.decode(written)
        require(reread == value, "what the writer wrote reads differently")
        if end == input.count {
            require((try? CBORReader.decode(input)) == value, "decode and decodePrefix disagree")
        } else {
            require((try? CBORReader.decode(input)) == nil, "trailing bytes accepted")
        }
    } catch {
        require(error.kind == .malformedCBOR || error.kind == .oversizedCBOR, "CBOR refused with \(error.kind)")
        require((try? CBORReader.decode(input)) == nil, "decode accepts what decodePrefix refused")
    }
}

func fuzzAttestationObject(_ input: [UInt8]) {
    do throws(AppAttestError) {
        let object = try AttestationObject(parsing: input)
        require((1...AttestationObject.maxCertificates).contains(object.certificates.count), "x5c count")
        let authData = object.authenticatorData
        guard let credential = authData.credential else { return require(false, "no credential data accepted") }
        require(authData.flags & AuthenticatorData.attestedCredentialDataFlag != 0, "credential data without AT")
        require(credential.publicKey.count == 65 && credential.publicKey[0] == 0x04, "credential key not a point")
        require(credential.aaguid.count == 16, "AAGUID of \(credential.aaguid.count) bytes")
        require(
            // The smallest COSE key: a map of kty, crv, x and y (alg is optional) is 75 bytes.
            authData.bytes.count >= 37 + 18 + credential.credentialID.count + 75,
            "authenticator data shorter than its parts"
        )
        let reparsed = try? AuthenticatorData(parsing: authData.bytes)
        require(reparsed == authData, "authenticator data reads differently twice")
        if let extensions = authData.extensions, case .map = extensions {
        } else if authData.extensions != nil {
            require(false, "extensions that are not a map")
        }
    } catch {
        requireFormatError(error, "attestation object")
    }
}

func fuzzRealAssertion(_ input: [UInt8]) {
    do throws(AppAttestError) {
        let (counter, index) = try AssertionCheck.verify(
            input,
            clientDataHash: Fixture.realClientDataHash,
            publicKey: Fixture.realKey,
            rpIDHashes: [Fixture.realAppHash],
            previousCounter: 0
        )
        // Accepted: check the signature again with swift-crypto, from a CBOR read of our own.
        let object = try CBORReader.decode(input)
        guard let authData = object[text: "authenticatorData"]?.byteString,
            let der = object[text: "signature"]?.byteString,
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: der),
            let key = try? P256.Signing.PublicKey(x963Representation: Fixture.realKey)
        else { return require(false, "accepted an assertion without its fields") }
        let nonce = Array(SHA256.hash(data: authData + Fixture.realClientDataHash))
        require(key.isValidSignature(signature, for: nonce), "accepted a signature that does not verify")
        require(Array(authData[0..<32]) == Fixture.realAppHash && index == 0, "accepted another rpIdHash")
        require(counter > 0, "accepted counter \(counter)")
    } catch {
        let allowed: Set<AppAttestError.Reason> = [.format, .challenge, .appID, .counter]
        require(allowed.contains(error.reason), "assertion refused with \(error.kind)")
    }
}

func fuzzSignedAuthenticatorData(_ authData: [UInt8]) {
    guard let signature = try? Fixture.key.signature(for: Array(SHA256.hash(data: authData + Fixture.clientDataHash)))
    else { return }
    let assertion = CBORWriter.encode(
        .map([
            CBORMapEntry(key: .text("signature"), value: .bytes(Array(signature.derRepresentation))),
            CBORMapEntry(key: .text("authenticatorData"), value: .bytes(authData)),
        ])
    )
    let parsed = try? AuthenticatorData(parsing: authData)
    let result = try? AssertionCheck.verify(
        assertion,
        clientDataHash: Fixture.clientDataHash,
        publicKey: Array(Fixture.key.publicKey.x963Representation),
        rpIDHashes: Fixture.appHashes,
        previousCounter: Fixture.previousCounter
    )
    // The oracle: a validly signed assertion is accepted exactly when its authenticator data parses,
    // names a listed app and raises the counter.
    let expected: (UInt32, Int)? = parsed.flatMap { data in
        guard let index = Fixture.appHashes.firstIndex(of: data.rpIDHash), data.counter > Fixture.previousCounter
        else { return nil }
        return (data.counter, index)
    }
    // An authenticator data too large for the assertion's CBOR is refused whole (oversized): allowed.
    if assertion.count > CBORLimits.appAttest.maxInputBytes || authData.count > CBORLimits.appAttest.maxStringBytes {
        require(result == nil, "an oversized assertion accepted")
        return
    }
    require(result?.counter == expected?.0 && result?.appIndex == expected?.1, "verdict differs from the oracle")
}
