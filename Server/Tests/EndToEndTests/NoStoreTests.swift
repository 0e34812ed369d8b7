import Foundation
import Synchronization
import Tessera
import TesseraServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the SDK receives over a real socket is never cacheable: every `/v1` answer it reads, success or
/// error, carries `Cache-Control: no-store` (the SDK's own URLSession keeps no cache either, but a
/// proxy, an app-supplied transport or an OS cache in between must not keep tokens or personal data).
@Suite struct NoStoreTests {
    /// Every answer the SDK read, with the path it asked for.
    final class Recorder: Sendable {
        let answers = Mutex<[(path: String, status: Int, cacheControl: String?)]>([])
    }

    @Test("Every /v1 answer the SDK reads from a live server is Cache-Control: no-store, errors included")
    func everyAnswerIsNoStore() async throws {
        try await EndToEndTests.withServerAndState { server, state in
            let recorder = Recorder()
            let network = TesseraConfiguration.urlSessionTransport
            let client = TesseraClient(
                configuration: TesseraConfiguration(
                    serverURL: server.baseURL,
                    publishableKey: server.project.publishableKey,
                    credentialStore: EncryptedFileStore(directory: state),
                    transport: { request in
                        let (data, response) = try await network(request)
                        let http = response as? HTTPURLResponse
                        recorder.answers.withLock {
                            $0.append(
                                (
                                    request.url?.path ?? "", http?.statusCode ?? 0,
                                    http?.value(forHTTPHeaderField: "Cache-Control")
                                ))
                        }
                        return (data, response)
                    },
                    observesApplicationLifecycle: false
                )
            )
            try await client.start()
            _ = try await client.identify(signedIdentityToken: server.identityToken(sub: "carol"))
            _ = try await client.registerDeviceToken("apns-token-carol", platform: .apns, environment: .sandbox)
            _ = try await client.sessions.list()
            // An error answer: an expired identity token is refused with a typed error.
            let expired = server.identityToken(sub: "carol", now: Date().addingTimeInterval(-7200))
            await #expect(throws: TesseraError.self) { try await client.identify(signedIdentityToken: expired) }
            try await client.signOut()

            let answers = recorder.answers.withLock { $0 }
            let paths = Set(answers.map(\.path))
            #expect(paths.isSuperset(of: ["/v1/sessions/anonymous", "/v1/sessions/identify", "/v1/devices"]))
            #expect(answers.contains { $0.status >= 400 }, "no error answer was read")
            for answer in answers where answer.path.hasPrefix("/v1/") {
                #expect(answer.cacheControl == "no-store", "\(answer.status) \(answer.path)")
            }
        }
    }
}
