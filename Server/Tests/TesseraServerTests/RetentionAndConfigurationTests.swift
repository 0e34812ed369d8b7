import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Rate-limit configuration and anonymous retention")
struct RetentionAndConfigurationTests {
    @Test("TESSERA_TRUSTED_PROXY_HEADER, _FAILED_SESSION_LOOKUPS_PER_MINUTE and _ANONYMOUS_RETENTION_DAYS")
    func environment() throws {
        let defaults = try ServerConfiguration.fromEnvironment([:])
        #expect(defaults.trustedProxyHeader == nil)
        #expect(defaults.failedSessionLookupsPerMinute == 120)
        #expect(defaults.anonymousRetentionDays == 30)
        let set = try ServerConfiguration.fromEnvironment([
            "TESSERA_TRUSTED_PROXY_HEADER": "X-Forwarded-For", "TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE": "0",
            "TESSERA_ANONYMOUS_RETENTION_DAYS": "7",
        ])
        #expect(set.trustedProxyHeader == "X-Forwarded-For")
        #expect(set.failedSessionLookupsPerMinute == nil)
        #expect(set.anonymousRetentionDays == 7)
        #expect(
            try ServerConfiguration.fromEnvironment(["TESSERA_ANONYMOUS_RETENTION_DAYS": "0"]).anonymousRetentionDays
                == nil)
        for bad in [
            ["TESSERA_TRUSTED_PROXY_HEADER": "X Forwarded"],
            ["TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE": "-1"],
            ["TESSERA_FAILED_SESSION_LOOKUPS_PER_MINUTE": "lots"],
            ["TESSERA_ANONYMOUS_RETENTION_DAYS": "-3"],
        ] {
            #expect(throws: ConfigurationError.self) { try ServerConfiguration.fromEnvironment(bad) }
        }
    }

    @Test("The cleanup service deletes old anonymous profiles without a live session, and rate-limit windows")
    func cleanupService() async throws {
        try await TestEnvironment.withApp { environment, client in
            let installationID = UUID().uuidString.lowercased()
            let secret = OpaqueToken.installationSecret()
            let short = try await client.anonymous(installationID: installationID, secret: secret, minutes: 5)
            let long = try await client.anonymous()
            let service = CleanupService(
                store: environment.store, interval: .seconds(60), batchSize: 1, anonymousRetentionSeconds: 30 * 86_400,
                now: { environment.clock.now }, logger: .init(label: "test"))
            environment.clock.advance(seconds: 29 * 86_400)
            await service.runOnce()
            #expect(try await client.admin(.get, "/v1/admin/profiles/\(short.profileID!)").status == .ok)
            environment.clock.advance(seconds: 2 * 86_400)
            await service.runOnce()
            #expect(try await client.admin(.get, "/v1/admin/profiles/\(short.profileID!)").status == .notFound)
            #expect(try await client.admin(.get, "/v1/admin/profiles/\(long.profileID!)").status == .ok)
            // The counters of the starts ended with their window and are gone too.
            let window = RateLimitWindow(containing: environment.clock.seconds - 31 * 86_400)
            let key = RateLimitKey(
                projectID: environment.project.project.id, bucket: .anonymousStart, key: "unknown")
            #expect(try await environment.store.hitRateLimits([key], window: window) == [1])
            // The installation went with the profile: the app may come back and start afresh.
            let again = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey,
                body: #"{"installation_id":"\#(installationID)","installation_secret":"\#(secret)"}"#)
            #expect(again.status == .created)
            #expect(again.profileID != short.profileID)
        }
    }
}
