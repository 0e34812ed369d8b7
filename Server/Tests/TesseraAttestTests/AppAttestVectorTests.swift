import Crypto
import Foundation
import Testing
import X509

@testable import TesseraAttest

/// One vendored vector of `Server/Tests/Vectors/app-attest` (the fields the tests need).
struct AppAttestVector: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    var kind: String
    var appId: String
    var environment: String?
    var keyIdB64: String
    var publicKeyX963B64: String
    var clientDataHashB64: String
    var attestationObjectB64: String?
    var verifyAt: String?
    var leafNotAfter: String?
    var assertionB64: String?
    var previousCounter: UInt32?
    var counter: UInt32?
    var pairsWith: String?

    var testDescription: String { name }

    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/app-attest")

    static func load(kind: String) -> [AppAttestVector] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(name)) else { return nil }
            return try? decoder.decode(AppAttestVector.self, from: data)
        }.filter { $0.kind == kind }
    }

    static let attestations = load(kind: "attestation")
    static let assertions = load(kind: "assertion")

    static func bytes(_ base64: String?) -> [UInt8] { Array(Data(base64Encoded: base64 ?? "") ?? Data()) }
    static func date(_ text: String?) -> Date {
        (text.flatMap { ISO8601DateFormatter().date(from: $0) }) ?? .distantPast
    }

    var env: AppAttestEnvironment { AppAttestEnvironment(rawValue: environment ?? "") ?? .production }
    var otherEnvironment: AppAttestEnvironment { env == .production ? .development : .production }
}

@Suite("App Attest: the vendored real vectors")
struct AppAttestVectorTests {
    @Test("The folder holds 12 attestations and 10 assertions")
    func counts() {
        #expect(AppAttestVector.attestations.count == 12)
        #expect(AppAttestVector.assertions.count == 10)
    }

    @Test("The compiled-in root is the vendored Apple App Attestation Root CA, fingerprint 1CB9…C932")
    func root() throws {
        let pem = try String(
            contentsOf: AppAttestVector.folder.appendingPathComponent("apple-app-attestation-root-ca.pem"),
            encoding: .utf8
        )
        #expect(try Certificate(pemEncoded: pem) == AppAttestVerifier.appleRoot)
        let der = try ForgedAttestation.der(AppAttestVerifier.appleRoot)
        let fingerprint = SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined()
        #expect(fingerprint == "1CB9823BA28BA6AD2D33A006941DE2AE4F513EF1D4E831B9F7E0FA7B6242C932")
    }

    @Test(
        "Each attestation verifies at its verifyAt, and at its leaf's notAfter", arguments: AppAttestVector.attestations
    )
    func attestationVerifies(vector: AppAttestVector) async throws {
        let verifier = AppAttestVerifier(appIDs: ["OTHERTEAM.other.app", vector.appId], environment: vector.env)
        for time in [AppAttestVector.date(vector.verifyAt), AppAttestVector.date(vector.leafNotAfter)] {
            let key = try await verifier.verifyAttestation(
                AppAttestVector.bytes(vector.attestationObjectB64),
                keyID: AppAttestVector.bytes(vector.keyIdB64),
                clientDataHash: AppAttestVector.bytes(vector.clientDataHashB64),
                at: time
            )
            #expect(key.publicKey == AppAttestVector.bytes(vector.publicKeyX963B64))
            #expect(key.keyID == AppAttestVector.bytes(vector.keyIdB64))
            #expect(key.appID == vector.appId)
            #expect(key.environment == vector.env)
            #expect(key.counter == 0)
            #expect(!key.receipt.isEmpty)
        }
    }

    @Test("Each attestation fails (chain) one second after its leaf expires", arguments: AppAttestVector.attestations)
    func attestationExpires(vector: AppAttestVector) async throws {
        let verifier = AppAttestVerifier(appIDs: [vector.appId], environment: vector.env)
        let error = await #expect(throws: AppAttestError.self) {
            try await verifier.verifyAttestation(
                AppAttestVector.bytes(vector.attestationObjectB64),
                keyID: AppAttestVector.bytes(vector.keyIdB64),
                clientDataHash: AppAttestVector.bytes(vector.clientDataHashB64),
                at: AppAttestVector.date(vector.leafNotAfter).addingTimeInterval(1)
            )
        }
        #expect(error?.kind == .invalidChain)
        #expect(error?.reason == .chain)
    }

    @Test(
        "Each attestation is refused for another app ID, the other environment, and another client data hash",
        arguments: AppAttestVector.attestations)
    func attestationMutations(vector: AppAttestVector) async throws {
        let object = AppAttestVector.bytes(vector.attestationObjectB64)
        let keyID = AppAttestVector.bytes(vector.keyIdB64)
        let hash = AppAttestVector.bytes(vector.clientDataHashB64)
        let time = AppAttestVector.date(vector.verifyAt)
        let cases: [(AppAttestVerifier, [UInt8], [UInt8], AppAttestError.Kind)] = [
            (AppAttestVerifier(appIDs: ["OTHERTEAM.other.app"], environment: vector.env), keyID, hash, .appIDMismatch),
            (
                AppAttestVerifier(appIDs: [vector.appId], environment: vector.otherEnvironment), keyID, hash,
                .environmentMismatch
            ),
            // Apple's sample attests the raw challenge: hashing it (as Tessera's protocol does) breaks the nonce.
            (
                AppAttestVerifier(appIDs: [vector.appId], environment: vector.env), keyID,
                Array(SHA256.hash(data: hash)), .nonceMismatch
            ),
            (
                AppAttestVerifier(appIDs: [vector.appId], environment: vector.env), keyID.map { $0 ^ 1 }, hash,
                .keyIDMismatch
            ),
            (
                AppAttestVerifier(
                    appIDs: [vector.appId], environment: vector.env, trustAnchors: [try TestAuthority().root]),
                keyID, hash, .untrustedRoot
            ),
        ]
        for (verifier, keyID, hash, kind) in cases {
            let error = await #expect(throws: AppAttestError.self) {
                try await verifier.verifyAttestation(object, keyID: keyID, clientDataHash: hash, at: time)
            }
            #expect(error?.kind == kind)
        }
    }

    @Test("The iOS 27 attestation carries extension data after the credential data with the ED flag clear")
    func iOS27Extensions() throws {
        let vector = try #require(AppAttestVector.attestations.first { $0.name == "apple-guide-ios27-attestation" })
        let object = try AttestationObject(parsing: AppAttestVector.bytes(vector.attestationObjectB64))
        #expect(object.authenticatorData.flags & AuthenticatorData.extensionDataFlag == 0)
        let extensions = try #require(object.authenticatorData.extensions)
        #expect(extensions[text: "apple_bundle_version_01"] == .text("1"))
        #expect(object.certificates.count == 2)
    }

    @Test(
        "Each assertion verifies with its key, and is refused when replayed, for another app or another client data",
        arguments: AppAttestVector.assertions)
    func assertion(vector: AppAttestVector) throws {
        let verifier = AppAttestVerifier(appIDs: [vector.appId], environment: vector.env)
        let assertion = AppAttestVector.bytes(vector.assertionB64)
        let key = AppAttestVector.bytes(vector.publicKeyX963B64)
        let hash = AppAttestVector.bytes(vector.clientDataHashB64)
        let previous = try #require(vector.previousCounter)
        let counter = try verifier.verifyAssertion(
            assertion, clientDataHash: hash, publicKey: key, previousCounter: previous)
        #expect(counter == vector.counter)
        #expect(throws: AppAttestError(.counterNotIncreasing)) {
            try verifier.verifyAssertion(assertion, clientDataHash: hash, publicKey: key, previousCounter: counter)
        }
        #expect(throws: AppAttestError(.signatureInvalid)) {
            try verifier.verifyAssertion(
                assertion, clientDataHash: hash.map { $0 ^ 0x80 }, publicKey: key, previousCounter: previous)
        }
        let other = AppAttestVerifier(appIDs: ["OTHERTEAM.other.app"], environment: vector.env)
        #expect(throws: AppAttestError(.appIDMismatch)) {
            try other.verifyAssertion(assertion, clientDataHash: hash, publicKey: key, previousCounter: previous)
        }
        let stranger = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(throws: AppAttestError(.signatureInvalid)) {
            try verifier.verifyAssertion(
                assertion, clientDataHash: hash, publicKey: stranger, previousCounter: previous)
        }
    }

    @Test("Each paired assertion was signed by the key its attestation attested", arguments: AppAttestVector.assertions)
    func pairing(vector: AppAttestVector) async throws {
        guard let pair = vector.pairsWith else { return }
        let attestation = try #require(AppAttestVector.attestations.first { "\($0.name).json" == pair })
        let verifier = AppAttestVerifier(appIDs: [attestation.appId], environment: attestation.env)
        let key = try await verifier.verifyAttestation(
            AppAttestVector.bytes(attestation.attestationObjectB64),
            keyID: AppAttestVector.bytes(attestation.keyIdB64),
            clientDataHash: AppAttestVector.bytes(attestation.clientDataHashB64),
            at: AppAttestVector.date(attestation.verifyAt)
        )
        let counter = try verifier.verifyAssertion(
            AppAttestVector.bytes(vector.assertionB64),
            clientDataHash: AppAttestVector.bytes(vector.clientDataHashB64),
            publicKey: key.publicKey,
            previousCounter: key.counter
        )
        #expect(counter == vector.counter)
    }
}
