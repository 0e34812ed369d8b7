import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The URLSession the SDK's default transport uses: ephemeral (nothing on disk), no cache, no cookies,
/// no credential storage, and a total deadline per request, not only an idle timeout.
///
/// Session tokens travel in the `Authorization` header; a cookie jar, a URL cache or a credential
/// store could only keep copies of answers that hold credentials. `timeoutIntervalForRequest` is the
/// idle timeout (no bytes for that long); `timeoutIntervalForResource` bounds the whole request, so a
/// server that trickles bytes cannot hold a call (and the single-flight callers waiting on it) forever.
enum HTTPSessionSettings {
    static func configuration(requestTimeout: Duration) -> URLSessionConfiguration {
        let seconds = max(requestTimeout.timeInterval, 1)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        return configuration
    }

    /// The default request timeout.
    static let defaultRequestTimeout: Duration = .seconds(30)

    /// The session for the default timeout, shared by every configuration that uses it (one connection
    /// pool, like `URLSession.shared`, instead of one per client).
    private static let defaultSession = URLSession(configuration: configuration(requestTimeout: defaultRequestTimeout))

    /// A transport over a session with these settings: the shared one for the default timeout, else a
    /// session of its own (made once per configuration).
    static func transport(requestTimeout: Duration) -> TesseraConfiguration.Transport {
        let session =
            requestTimeout == defaultRequestTimeout
            ? defaultSession : URLSession(configuration: configuration(requestTimeout: requestTimeout))
        return { request in
            #if canImport(FoundationNetworking)
                // Not cancelled with the calling task: see TesseraConfiguration.urlSessionTransport.
                try await Task { try await session.data(for: request) }.value
            #else
                try await session.data(for: request)
            #endif
        }
    }
}
