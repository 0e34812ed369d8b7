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

    /// A transport over a new session with these settings.
    static func transport(requestTimeout: Duration) -> TesseraConfiguration.Transport {
        let session = URLSession(configuration: configuration(requestTimeout: requestTimeout))
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
