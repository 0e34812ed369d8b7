import Crypto
import Foundation
import Testing
import X509

@testable import TesseraAttest

/// Attestations and assertions forged with a CA made in the tests: the untouched one verifies, and
/// every single-field mutation is refused with its own reason.
@Suite("App Attest: every mutation refused with its reason")
struct AppAttestMutationTests {
    let authority: TestAuthority
    let verifier: AppAttestVerifier

    init() throws {
        authority = try TestAuthority()
        verifier = AppAttestVerifier(
            appIDs: ["TEAMID1234.dev.tessera.other", "TEAMID1234.dev.tessera.attest"],
            environment: .production,
            trustAnchors: [authority.root]
        )
    }

    func verify(
        _ forged: ForgedAttestation,
        object: [UInt8]? = nil,
        keyID: [UInt8]? = nil,
        clientDataHash: [UInt8]? = nil,
        at time: Date = ForgedAttestation.verifyAt
    ) async throws -> AttestedKey {
        try await verifier.verifyAttestation(
            try object ?? forged.object(),
            keyID: keyID ?? forged.keyID,
            clientDataHash: clientDataHash ?? forged.clientDataHash,
            at: time
        )
    }

    /// Expects `body` to be refused with `kind` (and so with `kind.reason`).
    func expectRefusal(
        _ kind: AppAttestError.Kind,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("accepted; expected \(kind) (\(kind.reason))", sourceLocation: sourceLocation)
        } catch let error as AppAttestError {
            #expect(error.kind == kind, sourceLocation: sourceLocation)
            #expect(error.reason == kind.reason, sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("The untouched forged attestation verifies, then its assertions with rising counters")
    func untouched() async throws {
        let forged = ForgedAttestation(authority: authority)
        let key = try await verify(forged)
        #expect(key.publicKey == forged.publicKey)
        #expect(key.keyID == forged.keyID)
        #expect(key.appID == "TEAMID1234.dev.tessera.attest")
        #expect(key.environment == .production)
        #expect(key.receipt == forged.receipt)
        var counter = key.counter
        for next in [UInt32(1), 2, 7] {
            let assertion = ForgedAssertion(key: forged.credentialKey, counter: next)
            counter = try verifier.verifyAssertion(
                try assertion.object(),
                clientDataHash: assertion.clientDataHash,
                publicKey: key.publicKey,
                previousCounter: counter
            )
            #expect(counter == next)
        }
    }

    @Test("A development key verifies against a development verifier; extension data with the ED flag too")
    func developmentAndFlaggedExtensions() async throws {
        var forged = ForgedAttestation(authority: authority)
        forged.aaguid = AppAttestEnvironment.development.aaguid
        forged.flags = 0xC0
        forged.extensions = CBORWriter.encode(.map([CBORMapEntry(key: .text("ext"), value: .bytes([1, 0, 0, 0]))]))
        let development = AppAttestVerifier(
            appIDs: [forged.appID],
            environment: .development,
            trustAnchors: [authority.root]
        )
        let key = try await development.verifyAttestation(
            try forged.object(),
            keyID: forged.keyID,
            clientDataHash: forged.clientDataHash,
            at: ForgedAttestation.verifyAt
        )
        #expect(key.environment == .development)
    }

    // MARK: root, chain

    @Test("root: a chain from another (untrusted) root")
    func root() async throws {
        let forged = ForgedAttestation(authority: try TestAuthority(name: "Impostor"))
        await expectRefusal(.untrustedRoot) { _ = try await verify(forged) }
    }

    @Test("chain: a leaf expired one second before, not yet valid, or signed by a key not the intermediate's")
    func chain() async throws {
        let forged = ForgedAttestation(authority: authority)
        await expectRefusal(.invalidChain) {
            _ = try await verify(forged, at: forged.leafNotAfter.addingTimeInterval(1))
        }
        await expectRefusal(.invalidChain) {
            _ = try await verify(forged, at: forged.leafNotBefore.addingTimeInterval(-1))
        }
        var wrongSigner = forged
        wrongSigner.leafSigner = P256.Signing.PrivateKey()
        await expectRefusal(.invalidChain) { _ = try await verify(wrongSigner) }
    }

    // MARK: nonce

    @Test("nonce: another challenge, a nonce over other data, no nonce extension")
    func nonce() async throws {
        let forged = ForgedAttestation(authority: authority)
        await expectRefusal(.nonceMismatch) {
            _ = try await verify(forged, clientDataHash: Array(SHA256.hash(data: Array("another challenge".utf8))))
        }
        var wrongNonce = forged
        wrongNonce.nonce = Array(SHA256.hash(data: Array("other".utf8)))
        await expectRefusal(.nonceMismatch) { _ = try await verify(wrongNonce) }
        var noNonce = forged
        noNonce.nonce = []
        await expectRefusal(.missingNonce) { _ = try await verify(noNonce) }
    }

    // MARK: key_id

    @Test("key_id: a key ID that is not the leaf key's hash")
    func keyID() async throws {
        let forged = ForgedAttestation(authority: authority)
        await expectRefusal(.keyIDMismatch) { _ = try await verify(forged, keyID: forged.keyID.map { $0 ^ 0x01 }) }
        await expectRefusal(.keyIDMismatch) { _ = try await verify(forged, keyID: Array(forged.keyID.prefix(31))) }
    }

    /// One field of an otherwise valid attestation changed, and the refusal it must meet.
    struct FieldMutation: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let refusal: AppAttestError.Kind
        let apply: @Sendable (inout ForgedAttestation) -> Void

        init(
            _ description: String, _ refusal: AppAttestError.Kind,
            _ apply: @escaping @Sendable (inout ForgedAttestation) -> Void
        ) {
            (testDescription, self.refusal, self.apply) = (description, refusal, apply)
        }
    }

    static let fieldMutations: [FieldMutation] = [
        FieldMutation("key_id: a credential ID that is not the key ID", .credentialIDMismatch) {
            $0.credentialID = $0.keyID.reversed()
        },
        FieldMutation("key_id: a COSE credential key that is not the leaf's key", .credentialKeyMismatch) {
            $0.coseKey = P256.Signing.PrivateKey().publicKey
        },
        FieldMutation("app_id: an rpIdHash of an app ID the project does not list", .appIDMismatch) {
            $0.appID = "TEAMID1234.dev.tessera.attest2"
        },
        FieldMutation("counter: an attestation whose counter is not 0", .counterNotZero) { $0.counter = 1 },
        FieldMutation("environment: the other environment's AAGUID", .environmentMismatch) {
            $0.aaguid = AppAttestEnvironment.development.aaguid
        },
        FieldMutation("environment: an unknown AAGUID", .unknownAAGUID) {
            $0.aaguid = Array("appattest".utf8) + [0, 0, 0, 0, 0, 0, 1]
        },
        FieldMutation("format: an unknown fmt", .unknownFormat) { $0.format = "packed" },
    ]

    @Test(
        "key_id, app_id, counter, environment, fmt: one field changed is refused with its reason",
        arguments: fieldMutations)
    func fieldMutation(_ mutation: FieldMutation) async throws {
        var forged = ForgedAttestation(authority: authority)
        mutation.apply(&forged)
        await expectRefusal(mutation.refusal) { _ = try await verify(forged) }
    }

    // MARK: format

    @Test("format: malformed CBOR (truncated, trailing byte, duplicate key, indefinite length, bad UTF-8, not a map)")
    func malformedCBOR() async throws {
        let forged = ForgedAttestation(authority: authority)
        let object = try forged.object()
        let duplicate = CBORWriter.encode(
            .map([
                CBORMapEntry(key: .text("fmt"), value: .text("apple-appattest")),
                CBORMapEntry(key: .text("fmt"), value: .text("apple-appattest")),
            ])
        )
        var indefinite = object
        indefinite[0] = 0xBF
        let badUTF8: [UInt8] = [0xA1, 0x63, 0x66, 0x6D, 0x74, 0x62, 0xC3, 0x28]
        for malformed in [Array(object.dropLast()), object + [0x00], duplicate, indefinite, badUTF8, []] {
            await expectRefusal(.malformedCBOR) { _ = try await verify(forged, object: malformed) }
        }
        await expectRefusal(.missingField) { _ = try await verify(forged, object: CBORWriter.encode(.array([]))) }
    }

    @Test("format: oversized CBOR (input, depth, string length, container count)")
    func oversizedCBOR() async throws {
        let forged = ForgedAttestation(authority: authority)
        var deep = CBORValue.unsigned(0)
        for _ in 0..<9 { deep = .array([deep]) }
        let wide = CBORValue.array(Array(repeating: .unsigned(0), count: 33))
        let hugeString: [UInt8] = [0x5B, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00]  // claims 4 GiB
        var big = try forged.value()
        if case .map(var entries) = big {
            entries.append(CBORMapEntry(key: .text("padding"), value: .bytes([UInt8](repeating: 0, count: 16_000))))
            entries.append(CBORMapEntry(key: .text("padding2"), value: .bytes([UInt8](repeating: 0, count: 16_000))))
            big = .map(entries)
        }
        for oversized in [CBORWriter.encode(deep), CBORWriter.encode(wide), hugeString, CBORWriter.encode(big)] {
            await expectRefusal(.oversizedCBOR) { _ = try await verify(forged, object: oversized) }
        }
    }

    @Test("format: a certificate of x5c that does not parse")
    func malformedCertificate() async throws {
        let forged = ForgedAttestation(authority: authority)
        var value = try forged.value()
        guard case .map(var entries) = value else { return }
        entries[1].value = .map([
            CBORMapEntry(key: .text("x5c"), value: .array([.bytes([0x30, 0x03, 0x02, 0x01, 0x01])])),
            CBORMapEntry(key: .text("receipt"), value: .bytes([1])),
        ])
        value = .map(entries)
        await expectRefusal(.malformedCertificate) { _ = try await verify(forged, object: CBORWriter.encode(value)) }
    }

    @Test("format: authenticator data without credential data, or cut inside it")
    func malformedAuthenticatorData() async throws {
        var noCredential = ForgedAttestation(authority: authority)
        noCredential.flags = 0x00
        await expectRefusal(.malformedExtensions) { _ = try await verify(noCredential) }
        let forged = ForgedAttestation(authority: authority)
        for authData in [Array(forged.authenticatorData().prefix(37)), Array(forged.authenticatorData().prefix(60))] {
            var value = try forged.value()
            guard case .map(var entries) = value else { return }
            entries[2].value = .bytes(authData)
            value = .map(entries)
            await expectRefusal(authData.count == 37 ? .missingCredentialData : .malformedAuthenticatorData) {
                _ = try await verify(forged, object: CBORWriter.encode(value))
            }
        }
    }

    // MARK: extension tampering

    @Test(
        "extension tampering: a changed byte of the extension map (nonce), extension bytes that are not CBOR (format)")
    func extensionTampering() async throws {
        var forged = ForgedAttestation(authority: authority)
        forged.extensions = CBORWriter.encode(
            .map([
                CBORMapEntry(key: .text("apple_bundle_version_01"), value: .text("1")),
                CBORMapEntry(key: .text("apple_validation_category_01"), value: .bytes([1, 0, 0, 0])),
            ])
        )
        _ = try await verify(forged)  // untouched: verifies

        // Signed over the original extensions, then one value byte changed: still a CBOR map.
        let signedAuthData = forged.authenticatorData()
        var tamperedAuthData = signedAuthData
        tamperedAuthData[tamperedAuthData.count - 4] ^= 0x02
        forged.nonce = Array(SHA256.hash(data: signedAuthData + forged.clientDataHash))
        var value = try forged.value()
        guard case .map(var entries) = value else { return }
        entries[2].value = .bytes(tamperedAuthData)
        value = .map(entries)
        await expectRefusal(.nonceMismatch) { _ = try await verify(forged, object: CBORWriter.encode(value)) }

        // Extension bytes that are not one CBOR map (even with a nonce over them).
        for junk: [UInt8] in [[0xFF], [0x01], [0xA1, 0x61]] {
            var broken = ForgedAttestation(authority: authority)
            broken.extensions = junk
            await expectRefusal(.malformedExtensions) { _ = try await verify(broken) }
        }
    }

    // MARK: assertions

    @Test("assertion: replayed or lower counter, another app ID, another challenge, another key, malformed")
    func assertionMutations() async throws {
        let forged = ForgedAttestation(authority: authority)
        let key = try await verify(forged)
        let good = ForgedAssertion(key: forged.credentialKey, counter: 5)
        func check(_ assertion: ForgedAssertion, previous: UInt32 = 4, object: [UInt8]? = nil) throws -> UInt32 {
            try verifier.verifyAssertion(
                try object ?? assertion.object(),
                clientDataHash: good.clientDataHash,
                publicKey: key.publicKey,
                previousCounter: previous
            )
        }
        #expect(try check(good) == 5)
        await expectRefusal(.counterNotIncreasing) { _ = try check(good, previous: 5) }
        await expectRefusal(.counterNotIncreasing) { _ = try check(good, previous: 6) }
        var otherApp = good
        otherApp.appID = "TEAMID1234.dev.tessera.attest2"
        await expectRefusal(.appIDMismatch) { _ = try check(otherApp) }
        var otherChallenge = good
        otherChallenge.signedClientDataHash = Array(SHA256.hash(data: Array("another".utf8)))
        await expectRefusal(.signatureInvalid) { _ = try check(otherChallenge) }
        var otherKey = good
        otherKey.signer = P256.Signing.PrivateKey()
        await expectRefusal(.signatureInvalid) { _ = try check(otherKey) }
        let noSignature = CBORWriter.encode(
            .map([CBORMapEntry(key: .text("authenticatorData"), value: .bytes(good.authenticatorData()))])
        )
        await expectRefusal(.missingField) { _ = try check(good, object: noSignature) }
        let badSignature = CBORWriter.encode(
            .map([
                CBORMapEntry(key: .text("signature"), value: .bytes([0x30, 0x00])),
                CBORMapEntry(key: .text("authenticatorData"), value: .bytes(good.authenticatorData())),
            ])
        )
        await expectRefusal(.malformedSignature) { _ = try check(good, object: badSignature) }
        await expectRefusal(.malformedCBOR) { _ = try check(good, object: Array(try good.object().dropLast())) }
        await expectRefusal(.malformedPublicKey) {
            _ = try verifier.verifyAssertion(
                try good.object(),
                clientDataHash: good.clientDataHash,
                publicKey: [0x04] + [UInt8](repeating: 1, count: 64),
                previousCounter: 4
            )
        }
    }
}

@Suite("App Attest: Tessera's client data hashes")
struct AppAttestClientDataTests {
    @Test("Attestation: SHA-256(challenge); assertion: SHA-256(challenge ‖ UTF-8 installation ID)")
    func hashes() {
        let challenge: [UInt8] = Array(0..<32)
        let installation = "0190c5f2-8a3e-7b1c-9d4f-2e6a8b0c1d3e"
        #expect(AppAttestClientData.attestationHash(challenge: challenge) == Array(SHA256.hash(data: challenge)))
        #expect(
            AppAttestClientData.assertionHash(challenge: challenge, installationID: installation)
                == Array(SHA256.hash(data: challenge + Array(installation.utf8)))
        )
        #expect(
            AppAttestClientData.assertionHash(challenge: challenge, installationID: installation)
                != AppAttestClientData.assertionHash(challenge: challenge, installationID: installation + "x")
        )
    }
}
