import Foundation
import Testing

@testable import Tessera

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("The default transport's URLSession")
struct HTTPSessionTests {
    @Test("Ephemeral: no cache, no cookies, no credential storage; an idle timeout and a total deadline")
    func settings() {
        let configuration = HTTPSessionSettings.configuration(requestTimeout: .seconds(12))
        #expect(configuration.urlCache == nil)
        #expect(configuration.requestCachePolicy == .reloadIgnoringLocalCacheData)
        #expect(configuration.httpCookieStorage == nil)
        #expect(configuration.httpShouldSetCookies == false)
        #expect(configuration.httpCookieAcceptPolicy == .never)
        #expect(configuration.urlCredentialStorage == nil)
        #expect(configuration.timeoutIntervalForRequest == 12)
        #expect(configuration.timeoutIntervalForResource == 12, "a total deadline, not only an idle timeout")
    }

    @Test("A sub-second timeout is raised to one second, never zero (which URLSession reads as 'default')")
    func minimum() {
        let configuration = HTTPSessionSettings.configuration(requestTimeout: .milliseconds(10))
        #expect(configuration.timeoutIntervalForResource == 1)
    }

    @Test("Every request carries the configured idle timeout")
    func requestTimeout() async throws {
        let harness = Harness { $0.requestTimeout = .seconds(7) }
        harness.server.hold("POST /v1/sessions/anonymous")
        async let started: Void = harness.client.start()
        let exchange = await harness.transport.next()
        #expect(exchange.request.timeoutInterval == 7)
        #expect(exchange.request.httpShouldHandleCookies == false)
        #expect(exchange.request.cachePolicy == .reloadIgnoringLocalCacheData)
        exchange.respond(harness.server.reply(to: exchange.request))
        try await started
        await harness.client.stop()
    }
}
