// Also compiled into TesseraServerTests (Server/Tests/TesseraServerTests/AppAttestTestAuthority.swift is a
// link to this file; test targets cannot import each other): the endpoint tests mint attestations and
// assertions with the same forged authority.
import Crypto
import Foundation
import SwiftASN1
import X509

@testable import TesseraAttest

/// A root → intermediate certificate authority made in the tests, standing in for Apple's.
struct TestAuthority {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15
    static let end = start.addingTimeInterval(10 * 365 * 86_400)

    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate

    init(name: String = "Tessera Test App Attestation") throws {
        let rootName = try DistinguishedName {
            CommonName("\(name) Root CA")
            OrganizationName("Tessera Tests")
        }
        root = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(rootKey.publicKey),
            notValidBefore: Self.start,
            notValidAfter: Self.end,
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Self.caExtensions(),
            issuerPrivateKey: .init(rootKey)
        )
        intermediate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(intermediateKey.publicKey),
            notValidBefore: Self.start,
            notValidAfter: Self.end,
            issuer: rootName,
            subject: try Self.intermediateName(name),
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Self.caExtensions(),
            issuerPrivateKey: .init(rootKey)
        )
    }

    static func intermediateName(_ name: String) throws -> DistinguishedName {
        try DistinguishedName {
            CommonName("\(name) CA 1")
            OrganizationName("Tessera Tests")
        }
    }

    static func caExtensions() throws -> Certificate.Extensions {
        try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
    }

    /// The DER of Apple's nonce extension value, `SEQUENCE { [1] EXPLICIT OCTET STRING nonce }`.
    static func nonceExtensionValue(_ nonce: [UInt8]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.serialize(
                ASN1OctetString(contentBytes: nonce[...]),
                explicitlyTaggedWithTagNumber: 1,
                tagClass: .contextSpecific
            )
        }
        return serializer.serializedBytes
    }
}

/// An App Attest attestation object forged with a ``TestAuthority``; each field can be set wrong alone.
struct ForgedAttestation {
    var authority: TestAuthority
    var credentialKey = P256.Signing.PrivateKey()
    var appID = "TEAMID1234.dev.tessera.attest"
    var format = "apple-appattest"
    var aaguid = AppAttestEnvironment.production.aaguid
    var counter: UInt32 = 0
    var flags: UInt8 = 0x40
    var challenge: [UInt8] = Array("tessera-test-challenge-32-bytes!".utf8)
    /// Extension data appended after the credential data (as iOS 27 does, ED flag clear).
    var extensions: [UInt8] = []
    /// Replaces the credential ID (the key ID by default).
    var credentialID: [UInt8]?
    /// Replaces the COSE key's point (the leaf's key by default).
    var coseKey: P256.Signing.PublicKey?
    /// Replaces the nonce written into the leaf (the right one by default); `[]` leaves the extension out.
    var nonce: [UInt8]?
    var leafNotBefore = TestAuthority.start
    var leafNotAfter = TestAuthority.start.addingTimeInterval(3 * 86_400)
    /// Signs the leaf with this key instead of the intermediate's.
    var leafSigner: P256.Signing.PrivateKey?
    var receipt: [UInt8] = Array("receipt".utf8)

    init(authority: TestAuthority) {
        self.authority = authority
    }

    var clientDataHash: [UInt8] { Array(SHA256.hash(data: challenge)) }
    var publicKey: [UInt8] { Array(credentialKey.publicKey.x963Representation) }
    var keyID: [UInt8] { Array(SHA256.hash(data: publicKey)) }
    static let verifyAt = TestAuthority.start.addingTimeInterval(86_400)

    func coseKeyValue() -> CBORValue {
        let point = Array((coseKey ?? credentialKey.publicKey).x963Representation)
        return .map([
            CBORMapEntry(key: .unsigned(1), value: .unsigned(2)),
            CBORMapEntry(key: .unsigned(3), value: .negative(6)),
            CBORMapEntry(key: .negative(0), value: .unsigned(1)),
            CBORMapEntry(key: .negative(1), value: .bytes(Array(point[1..<33]))),
            CBORMapEntry(key: .negative(2), value: .bytes(Array(point[33..<65]))),
        ])
    }

    func authenticatorData() -> [UInt8] {
        let credentialID = self.credentialID ?? keyID
        var bytes = Array(SHA256.hash(data: Array(appID.utf8)))
        bytes.append(flags)
        bytes += withUnsafeBytes(of: counter.bigEndian, Array.init)
        bytes += aaguid
        bytes += [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
        bytes += CBORWriter.encode(coseKeyValue())
        bytes += extensions
        return bytes
    }

    func leaf(authData: [UInt8]) throws -> Certificate {
        let nonce = self.nonce ?? Array(SHA256.hash(data: authData + clientDataHash))
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            if !nonce.isEmpty {
                Certificate.Extension(
                    oid: AppAttestVerifier.nonceExtensionOID,
                    critical: false,
                    value: try TestAuthority.nonceExtensionValue(nonce)[...]
                )
            }
        }
        let subject = try DistinguishedName {
            CommonName(keyID.map { String($0, radix: 16) }.joined())
            OrganizationName("Tessera Tests")
        }
        return try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(credentialKey.publicKey),
            notValidBefore: leafNotBefore,
            notValidAfter: leafNotAfter,
            issuer: authority.intermediate.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: .init(leafSigner ?? authority.intermediateKey)
        )
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The CBOR value of the attestation object, before encoding (tests may edit it).
    func value() throws -> CBORValue {
        let authData = authenticatorData()
        let chain = [try Self.der(leaf(authData: authData)), try Self.der(authority.intermediate)]
        return .map([
            CBORMapEntry(key: .text("fmt"), value: .text(format)),
            CBORMapEntry(
                key: .text("attStmt"),
                value: .map([
                    CBORMapEntry(key: .text("x5c"), value: .array(chain.map(CBORValue.bytes))),
                    CBORMapEntry(key: .text("receipt"), value: .bytes(receipt)),
                ])
            ),
            CBORMapEntry(key: .text("authData"), value: .bytes(authData)),
        ])
    }

    func object() throws -> [UInt8] { CBORWriter.encode(try value()) }
}

/// An assertion made with a forged attestation's key.
struct ForgedAssertion {
    var key: P256.Signing.PrivateKey
    var appID = "TEAMID1234.dev.tessera.attest"
    var counter: UInt32 = 1
    var clientDataHash: [UInt8] = Array(SHA256.hash(data: Array("challenge‖installation".utf8)))
    /// Signs with this key instead of ``key``.
    var signer: P256.Signing.PrivateKey?
    /// Signs over this client data hash instead of ``clientDataHash``.
    var signedClientDataHash: [UInt8]?

    func authenticatorData() -> [UInt8] {
        Array(SHA256.hash(data: Array(appID.utf8))) + [0x40] + withUnsafeBytes(of: counter.bigEndian, Array.init)
    }

    func object() throws -> [UInt8] {
        let authData = authenticatorData()
        let nonce = Array(SHA256.hash(data: authData + (signedClientDataHash ?? clientDataHash)))
        let signature = try (signer ?? key).signature(for: nonce)
        return CBORWriter.encode(
            .map([
                CBORMapEntry(key: .text("signature"), value: .bytes(Array(signature.derRepresentation))),
                CBORMapEntry(key: .text("authenticatorData"), value: .bytes(authData)),
            ])
        )
    }
}
