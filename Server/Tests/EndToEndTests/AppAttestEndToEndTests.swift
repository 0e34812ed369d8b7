import Crypto
import Foundation
import SwiftASN1
import Synchronization
import Tessera
import TesseraTokens
import Testing
import X509

@testable import TesseraAttest
@testable import TesseraServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// App Attest, SDK ↔ live server in `enforce`: an ``AppAttestProvider`` backed by a test certificate
/// authority (which the in-process server is told to trust) attests at the first start and asserts at
/// restores and identifies; a client without App Attest is refused; a key the device invalidates is
/// re-attested once.
@Suite("App Attest against a live server", .timeLimit(.minutes(2)))
struct AppAttestEndToEndTests {
    static let appID = "TEAMID1234.dev.tessera.attest"

    /// Runs `body` with a live node whose project is in `enforce` for ``appID`` and trusts `authority`.
    static func withServer(
        authority: DeviceAttestationAuthority, _ body: @escaping @Sendable (EndToEndTests.Harness) async throws -> Void
    ) async throws {
        try await withServer(authority: authority, mode: .enforce) { server, _ in try await body(server) }
    }

    /// Runs `body` with a live node whose project is in `mode` for ``appID`` and trusts `authority`, and its store.
    static func withServer(
        authority: DeviceAttestationAuthority, mode: AppAttestSettings.Mode,
        _ body: @escaping @Sendable (EndToEndTests.Harness, SQLiteStore) async throws -> Void
    ) async throws {
        var settings = ProjectSettings()
        settings.appAttest.mode = mode
        settings.appAttest.appIDs = [appID]
        var configuration = LiveNode.quiet
        // The test's root, through the in-process configuration only.
        configuration.appAttestTrustAnchors = [authority.root]
        try await LiveNode.run(project: "E2E", settings: settings, configuration: configuration) {
            port, project, store in
            try await body(EndToEndTests.Harness(port: port, project: project), store)
        }
    }

    static func client(
        _ server: EndToEndTests.Harness, state: URL, provider: (any AppAttestProvider)?
    ) -> TesseraClient {
        var configuration = TesseraConfiguration(
            serverURL: server.baseURL, publishableKey: server.project.publishableKey,
            credentialStore: EncryptedFileStore(directory: state), observesApplicationLifecycle: false)
        if let provider {
            configuration.appAttest = .automatic
            configuration.appAttestProvider = provider
        }
        return TesseraClient(configuration: configuration)
    }

    /// Runs `body` with a live node under enforce and a client started on it, whose device attests
    /// with a new test authority.
    static func withStartedClient(
        _ body:
            @escaping @Sendable (EndToEndTests.Harness, AuthorityBackedAppAttestProvider, TesseraClient)
            async throws -> Void
    ) async throws {
        let authority = try DeviceAttestationAuthority()
        try await withServer(authority: authority) { server in
            let state = EndToEndTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: state) }
            let device = AuthorityBackedAppAttestProvider(authority: authority, appID: Self.appID)
            let client = Self.client(server, state: state, provider: device)
            try await client.start()
            try await body(server, device, client)
        }
    }

    /// The installation's App Attest record as operators see it (`GET /v1/admin/lookup`).
    static func verdict(_ server: EndToEndTests.Harness, installation: String) async throws -> [String: Any]? {
        var request = URLRequest(
            url: URL(string: "\(server.baseURL.absoluteString)/v1/admin/lookup?q=\(installation)")!)
        request.setValue("Bearer \(server.project.secretKey)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        #expect(status == 200)
        let installations = json["installations"] as? [[String: Any]] ?? []
        return installations.first { $0["installation_id"] as? String == installation }?["app_attest"]
            as? [String: Any]
    }

    @Test("Enforce: the SDK attests, then asserts at a restore and an identify; a client without App Attest is refused")
    func enforceAcceptsTheSDK() async throws {
        try await Self.withStartedClient { server, device, client in
            #expect(client.appAttestStatus == .attested)
            let installation = try #require(await client.installationID?.uuidString.lowercased())
            let record = try #require(try await Self.verdict(server, installation: installation))
            #expect(record["verdict"] as? String == "attested")
            #expect((record["key"] as? [String: Any])?["app_id"] as? String == Self.appID)

            // A restore: an anonymous start of the same installation, asserted.
            try await client.sessions.revoke()
            try await client.refreshSession()
            // An identify from the installation's session, asserted.
            let capabilities = try await client.identify(signedIdentityToken: server.identityToken(sub: "alice"))
            #expect(capabilities.authenticated)
            #expect(
                device.calls.withLock { $0 } == ["generateKey", "attestKey", "generateAssertion", "generateAssertion"])
            let after = try #require(try await Self.verdict(server, installation: installation))
            #expect((after["key"] as? [String: Any])?["counter"] as? Int == 2)
            await client.stop()

            // The same app without App Attest: refused, and nothing is created.
            let otherState = EndToEndTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: otherState) }
            let plain = Self.client(server, state: otherState, provider: nil)
            await #expect { try await plain.start() } throws: {
                ($0 as? TesseraError)?.code == .attestationRequired
            }
            await plain.stop()
        }
    }

    @Test("A key the device invalidates (a backup restored onto another device) is re-attested once at the restore")
    func invalidatedKeyIsReattested() async throws {
        try await Self.withStartedClient { server, device, client in
            let profile = try #require(await client.profile)
            device.invalidateKeys()
            try await client.sessions.revoke()
            try await client.refreshSession()
            #expect(await client.profile?.id == profile.id, "the same anonymous identity, restored")
            #expect(
                device.calls.withLock { $0 } == [
                    "generateKey", "attestKey", "generateAssertion", "generateKey", "attestKey",
                ])
            #expect(client.appAttestStatus == .attested)
            // The new key asserts at the identify.
            _ = try await client.identify(signedIdentityToken: server.identityToken(sub: "bob"))
            #expect(device.calls.withLock { $0.last } == "generateAssertion")
            await client.stop()
        }
    }
}

extension AppAttestEndToEndTests {
    @Test("Enforce: an identify whose key the device invalidated attests a new key in the identify")
    func identifyAfterTheKeyWasInvalidated() async throws {
        try await Self.withStartedClient { server, device, client in
            let anonymous = try #require(await client.profile)
            let installation = try #require(await client.installationID?.uuidString.lowercased())
            let first = try #require(try await Self.verdict(server, installation: installation))
            device.invalidateKeys()
            let capabilities = try await client.identify(signedIdentityToken: server.identityToken(sub: "carol"))
            #expect(capabilities.authenticated)
            #expect(await client.profile?.id == anonymous.id, "promoted: the anonymous profile carried over")
            #expect(
                device.calls.withLock { $0 } == [
                    "generateKey", "attestKey", "generateAssertion", "generateKey", "attestKey",
                ])
            let after = try #require(try await Self.verdict(server, installation: installation))
            let firstKey = (first["key"] as? [String: Any])?["key_id"] as? String
            let newKey = (after["key"] as? [String: Any])?["key_id"] as? String
            #expect(firstKey != nil && newKey != nil && firstKey != newKey, "a new key was attested")
            #expect(after["verdict"] as? String == "attested")
            #expect(try await client.sessions.list().count == 1, "the replaced anonymous session ended")
            await client.stop()
        }
    }
}

extension AppAttestEndToEndTests {
    /// Sets the project's `app_attest.mode` through the admin API, as an operator would.
    static func setMode(_ server: EndToEndTests.Harness, _ mode: String) async throws {
        var request = URLRequest(url: URL(string: "\(server.baseURL.absoluteString)/v1/admin/project")!)
        request.httpMethod = "PATCH"
        request.setValue("Bearer \(server.project.secretKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"app_attest":{"mode":"\#(mode)"}}"#.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }

    /// An anonymous start without any attestation, as a script holding the publishable key sends it.
    static func scriptStart(_ server: EndToEndTests.Harness) async throws -> (status: Int?, code: String?) {
        var request = URLRequest(url: URL(string: "\(server.baseURL.absoluteString)/v1/sessions/anonymous")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(server.project.publishableKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let body: [String: String] = [
            "installation_id": UUID().uuidString.lowercased(),
            "installation_secret": Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) }),
        ]
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        return ((response as? HTTPURLResponse)?.statusCode, (json?["error"] as? [String: Any])?["code"] as? String)
    }

    @Test("Rollout: installations started and identified while off keep working under monitor, then enforce")
    func rolloutWithoutLockouts() async throws {
        let authority = try DeviceAttestationAuthority()
        try await Self.withServer(authority: authority, mode: .off) { server, store in
            // Off: the app already attests (its keys are not kept); one user identifies, one stays anonymous.
            var clients: [(client: TesseraClient, device: AuthorityBackedAppAttestProvider, user: String?)] = []
            var states: [URL] = []
            defer { for state in states { try? FileManager.default.removeItem(at: state) } }
            for user in ["early-user", nil] {
                let state = EndToEndTests.temporaryDirectory()
                states.append(state)
                let device = AuthorityBackedAppAttestProvider(authority: authority, appID: Self.appID)
                let client = Self.client(server, state: state, provider: device)
                try await client.start()
                if let user { _ = try await client.identify(signedIdentityToken: server.identityToken(sub: user)) }
                clients.append((client, device, user))
            }
            let profiles = try await clients.asyncMap { try #require(await $0.client.profile?.id) }
            let installations = try await clients.asyncMap {
                try #require(await $0.client.installationID?.uuidString.lowercased())
            }
            for installation in installations {
                #expect(try await Self.verdict(server, installation: installation) == nil, "off: nothing recorded")
            }

            // Each mode in turn: every user identifies or restores again; none is refused.
            var lockouts = 0
            for mode in ["monitor", "enforce"] {
                try await Self.setMode(server, mode)
                for entry in clients {
                    do {
                        if let user = entry.user {
                            _ = try await entry.client.identify(signedIdentityToken: server.identityToken(sub: user))
                        } else {
                            try await entry.client.sessions.revoke()
                            try await entry.client.refreshSession()
                        }
                    } catch {
                        lockouts += 1
                        Issue.record("\(mode): \(entry.user ?? "anonymous") refused: \(error)")
                    }
                }
                if mode == "monitor" {
                    let record = try await Self.verdict(server, installation: installations[0])
                    #expect(record?["verdict"] as? String == "failed: key_id", "monitor: recorded, not refused")
                }
            }
            #expect(lockouts == 0)
            let profilesAfter = await clients.asyncMap { await $0.client.profile?.id }
            #expect(profilesAfter == profiles, "the same users")
            for installation in installations {
                let record = try #require(try await Self.verdict(server, installation: installation))
                #expect(record["verdict"] as? String == "attested")
                #expect(record["key"] is [String: Any], "a key the server keeps now")
            }
            // The identified user's identify attested a new key once (after its unknown key was refused),
            // and asserts with it from then on.
            _ = try await clients[0].client.identify(signedIdentityToken: server.identityToken(sub: "early-user"))
            #expect(
                clients[0].device.calls.withLock { $0 } == [
                    "generateKey", "attestKey", "generateAssertion", "generateAssertion", "generateAssertion",
                    "generateKey", "attestKey", "generateAssertion",
                ])
            for entry in clients { await entry.client.stop() }

            // A script holding the publishable key, without any attestation, creates nothing.
            let before = try await store.projectCounts(
                projectID: server.project.project.id, now: Int64(Date().timeIntervalSince1970))
            for _ in 0..<5 {
                let refused = try await Self.scriptStart(server)
                #expect(refused.status == 403)
                #expect(refused.code == "attestation_required")
            }
            let after = try await store.projectCounts(
                projectID: server.project.project.id, now: Int64(Date().timeIntervalSince1970))
            #expect(after.profiles == before.profiles)
        }
    }
}

extension Array {
    /// The values of `transform` over the elements, in order.
    func asyncMap<Value>(_ transform: (Element) async throws -> Value) async rethrows -> [Value] {
        var values: [Value] = []
        for element in self { values.append(try await transform(element)) }
        return values
    }
}

/// A root → intermediate certificate authority made in the tests, standing in for Apple's, valid from
/// a day ago (the live server verifies chains at its current time).
struct DeviceAttestationAuthority: Sendable {
    let start = Date().addingTimeInterval(-86_400)
    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate

    init() throws {
        let rootName = try DistinguishedName {
            CommonName("Tessera E2E App Attestation Root CA")
            OrganizationName("Tessera Tests")
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: start,
            notValidAfter: start.addingTimeInterval(365 * 86_400), issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: start,
            notValidAfter: start.addingTimeInterval(365 * 86_400), issuer: rootName,
            subject: try DistinguishedName {
                CommonName("Tessera E2E App Attestation CA 1")
                OrganizationName("Tessera Tests")
            },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(rootKey))
    }

    /// An attestation object for `key` over `clientDataHash`, as `DCAppAttestService.attestKey` makes one.
    func attestation(key: P256.Signing.PrivateKey, appID: String, clientDataHash: [UInt8]) throws -> [UInt8] {
        let publicKey = Array(key.publicKey.x963Representation)
        let keyID = Array(SHA256.hash(data: publicKey))
        var authData = Array(SHA256.hash(data: Array(appID.utf8)))
        authData.append(0x40)
        authData += [0, 0, 0, 0]
        authData += AppAttestEnvironment.production.aaguid
        authData += [UInt8(keyID.count >> 8), UInt8(keyID.count & 0xFF)] + keyID
        authData += CBORWriter.encode(
            .map([
                CBORMapEntry(key: .unsigned(1), value: .unsigned(2)),
                CBORMapEntry(key: .unsigned(3), value: .negative(6)),
                CBORMapEntry(key: .negative(0), value: .unsigned(1)),
                CBORMapEntry(key: .negative(1), value: .bytes(Array(publicKey[1..<33]))),
                CBORMapEntry(key: .negative(2), value: .bytes(Array(publicKey[33..<65]))),
            ]))
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        var nonceValue = DER.Serializer()
        try nonceValue.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.serialize(
                ASN1OctetString(contentBytes: nonce[...]), explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific)
        }
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: start,
            notValidAfter: start.addingTimeInterval(3 * 86_400), issuer: intermediate.subject,
            subject: try DistinguishedName { CommonName(keyID.map { String($0, radix: 16) }.joined()) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(
                    oid: AppAttestVerifier.nonceExtensionOID, critical: false, value: nonceValue.serializedBytes[...])
            },
            issuerPrivateKey: .init(intermediateKey))
        let chain = try [leaf, intermediate].map { certificate in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return CBORValue.bytes(serializer.serializedBytes)
        }
        return CBORWriter.encode(
            .map([
                CBORMapEntry(key: .text("fmt"), value: .text("apple-appattest")),
                CBORMapEntry(
                    key: .text("attStmt"),
                    value: .map([
                        CBORMapEntry(key: .text("x5c"), value: .array(chain)),
                        CBORMapEntry(key: .text("receipt"), value: .bytes(Array("receipt".utf8))),
                    ])),
                CBORMapEntry(key: .text("authData"), value: .bytes(authData)),
            ]))
    }
}

/// An ``AppAttestProvider`` whose keys are software P-256 keys attested by a
/// ``DeviceAttestationAuthority``: what `DCAppAttestService` does, with the test's root.
final class AuthorityBackedAppAttestProvider: AppAttestProvider {
    struct Key {
        var key: P256.Signing.PrivateKey
        var counter: UInt32
        var invalid = false
    }

    let authority: DeviceAttestationAuthority
    let appID: String
    let calls = Mutex<[String]>([])
    private let keys = Mutex<[String: Key]>([:])

    init(authority: DeviceAttestationAuthority, appID: String) {
        self.authority = authority
        self.appID = appID
    }

    var isSupported: Bool { true }

    /// Every key made so far becomes unusable, as after a backup restored onto another device.
    func invalidateKeys() { keys.withLock { for id in $0.keys { $0[id]?.invalid = true } } }

    private func key(_ keyID: String) throws -> P256.Signing.PrivateKey {
        guard let key = keys.withLock({ $0[keyID] }), !key.invalid else { throw AppAttestError.invalidKey }
        return key.key
    }

    func generateKey() async throws -> String {
        calls.withLock { $0.append("generateKey") }
        let key = P256.Signing.PrivateKey()
        let keyID = Data(SHA256.hash(data: key.publicKey.x963Representation)).base64EncodedString()
        keys.withLock { $0[keyID] = Key(key: key, counter: 0) }
        return keyID
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        calls.withLock { $0.append("attestKey") }
        return Data(try authority.attestation(key: try key(keyID), appID: appID, clientDataHash: Array(clientDataHash)))
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        calls.withLock { $0.append("generateAssertion") }
        let key = try key(keyID)
        let counter = keys.withLock { keys -> UInt32 in
            keys[keyID]!.counter += 1
            return keys[keyID]!.counter
        }
        let authData =
            Array(SHA256.hash(data: Array(appID.utf8))) + [0x40] + withUnsafeBytes(of: counter.bigEndian, Array.init)
        let signature = try key.signature(for: Array(SHA256.hash(data: authData + Array(clientDataHash))))
        return Data(
            CBORWriter.encode(
                .map([
                    CBORMapEntry(key: .text("signature"), value: .bytes(Array(signature.derRepresentation))),
                    CBORMapEntry(key: .text("authenticatorData"), value: .bytes(authData)),
                ])))
    }
}
