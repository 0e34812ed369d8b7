import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOPosix
import TesseraTokens

/// Sends one webhook delivery (Standard Webhooks v1) and says what came of it.
///
/// The sender resolves the URL's host itself, checks every address against
/// ``WebhookAddressRules`` (unless insecure webhooks are allowed) and connects to a checked
/// address, keeping the original name for the `Host` header, TLS SNI and certificate checks, so a
/// DNS answer cannot change between the check and the connection. Redirects are not followed and
/// at most ``maximumResponseBytes`` of an answer's body are read.
public struct WebhookSender: Sendable {
    /// One delivery: the event ID (the same on every attempt), when it is signed, and the event JSON.
    public struct Delivery: Sendable, Hashable {
        public var id: String
        /// Unix seconds, the `webhook-timestamp` header.
        public var timestamp: Int64
        public var body: [UInt8]
        /// The W3C `traceparent` and `tracestate` headers the delivery carries (nil: none), in the trace
        /// of the request that produced the event.
        public var traceParent: String?
        public var traceState: String?

        public init(
            id: String, timestamp: Int64, body: [UInt8], traceParent: String? = nil, traceState: String? = nil
        ) {
            self.id = id
            self.timestamp = timestamp
            self.body = body
            self.traceParent = traceParent
            self.traceState = traceState
        }
    }

    /// How much of an answer's body is read (and kept with the attempt); the rest is dropped.
    public static let maximumResponseBytes = 4096
    /// The `User-Agent` of every delivery.
    public static let userAgent = "Tessera-Webhooks/1"

    public var allowInsecure: Bool
    /// The limit on a whole attempt: connection, request and answer.
    public var timeout: Duration
    public var eventLoopGroup: any EventLoopGroup
    /// Resolves a host name to its addresses (tests inject answers).
    public var resolve: @Sendable (String) async throws -> [IPAddressBytes]

    public init(
        allowInsecure: Bool, timeout: Duration = .seconds(15),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        resolve: @escaping @Sendable (String) async throws -> [IPAddressBytes] = WebhookResolver.resolve
    ) {
        self.allowInsecure = allowInsecure
        self.timeout = timeout
        self.eventLoopGroup = eventLoopGroup
        self.resolve = resolve
    }

    /// The three `webhook-` headers and the content type of a delivery signed with `secrets`
    /// (one `v1,` signature each), and its trace context when it has one.
    public static func headers(for delivery: Delivery, secrets: [WebhookSecret]) -> [(String, String)] {
        var headers = [
            ("webhook-id", delivery.id),
            ("webhook-timestamp", String(delivery.timestamp)),
            (
                "webhook-signature",
                WebhookSigner(secrets: secrets).signature(
                    id: delivery.id, timestamp: delivery.timestamp, body: delivery.body)
            ),
            ("content-type", "application/json"),
        ]
        if let traceParent = delivery.traceParent {
            headers.append(("traceparent", traceParent))
            if let traceState = delivery.traceState { headers.append(("tracestate", traceState)) }
        }
        return headers
    }

    /// POSTs `delivery` to `url`, signed with each of `secrets`.
    public func send(_ delivery: Delivery, to url: String, secrets: [WebhookSecret]) async -> WebhookOutcome {
        let clock = ContinuousClock()
        let start = clock.now
        func outcome(_ kind: WebhookOutcome.Kind, status: Int? = nil, error: WebhookOutcome.ErrorKind? = nil)
            -> WebhookOutcome
        {
            let elapsed = clock.now - start
            let milliseconds =
                elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            return WebhookOutcome(kind: kind, statusCode: status, error: error, durationMilliseconds: milliseconds)
        }

        guard let target = try? WebhookAddressRules.checkURL(url, allowInsecure: allowInsecure) else {
            return outcome(.failed, error: .urlNotAllowed)
        }
        let addresses: [IPAddressBytes]
        do {
            addresses = try await resolve(target.host)
        } catch {
            return outcome(.failed, error: .dns)
        }
        guard let address = addresses.first else { return outcome(.failed, error: .dns) }
        if !allowInsecure, !addresses.allSatisfy(WebhookAddressRules.isAllowed) {
            return outcome(.failed, error: .urlNotAllowed)
        }

        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: Self.timeAmount(timeout), read: Self.timeAmount(timeout))
        configuration.httpVersion = .http1Only
        let pinned = IPAddressBytes(target.host) == nil ? address.description : nil
        if let pinned {
            // Connect to the address checked above; the URL keeps the name for Host, SNI and the certificate.
            configuration.dnsOverride = [target.host: pinned]
        }
        let result: Attempt
        if eventLoopGroup === MultiThreadedEventLoopGroup.singleton {
            // Keep-alive connections, reused by the next deliveries to the same host and address.
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit =
                WebhookClients.shared.connectionsPerHost
            let key = WebhookClients.Key(
                host: target.host, address: pinned, timeout: Self.timeAmount(timeout).nanoseconds)
            let (group, settings) = (eventLoopGroup, configuration)
            let make = { HTTPClient(eventLoopGroupProvider: .shared(group), configuration: settings) }
            result = await WebhookClients.shared.with(key, make: make) { client in
                await post(delivery, to: target.url, secrets: secrets, with: client)
            }
        } else {
            let client = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup), configuration: configuration)
            result = await post(delivery, to: target.url, secrets: secrets, with: client)
            try? await client.shutdown()
        }
        switch result {
        case .answered(let status, let body):
            var answered: WebhookOutcome
            switch status {
            case 200..<300: answered = outcome(.delivered, status: status)
            case 410: answered = outcome(.gone, status: status)
            default: answered = outcome(.failed, status: status)
            }
            answered.responseBody = body
            return answered
        case .failed(let error):
            return outcome(.failed, error: error)
        }
    }

    private enum Attempt {
        case answered(Int, body: [UInt8])
        case failed(WebhookOutcome.ErrorKind)
    }

    /// The answer's status code, or why there was none.
    private func post(_ delivery: Delivery, to url: String, secrets: [WebhookSecret], with client: HTTPClient) async
        -> Attempt
    {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in Self.headers(for: delivery, secrets: secrets) {
            request.headers.add(name: name, value: value)
        }
        request.headers.replaceOrAdd(name: "user-agent", value: Self.userAgent)
        request.body = .bytes(ByteBuffer(bytes: delivery.body))
        do {
            let response = try await client.execute(request, timeout: Self.timeAmount(timeout))
            var body: [UInt8] = []
            for try await chunk in response.body {
                body += chunk.readableBytesView.prefix(Self.maximumResponseBytes - body.count)
                if body.count >= Self.maximumResponseBytes { break }
            }
            return .answered(Int(response.status.code), body: body)
        } catch {
            return .failed(Self.classify(error))
        }
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// The kind of a transport failure.
    static func classify(_ error: any Error) -> WebhookOutcome.ErrorKind {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: return .timeout
            case .remoteConnectionClosed: return .refused
            default: break
            }
        }
        if error is CancellationError { return .timeout }
        if let error = error as? IOError {
            return error.errnoCode == ECONNREFUSED || error.errnoCode == ECONNRESET ? .refused : .other
        }
        let name = String(reflecting: type(of: error))
        if name.contains("SSL") || name.contains("TLS") { return .tls }
        if name.contains("NIOConnectionError") || name.contains("ChannelError") { return .refused }
        let text = String(describing: error)
        if text.contains("ECONNREFUSED") || text.contains("Connection refused") { return .refused }
        return .other
    }
}
