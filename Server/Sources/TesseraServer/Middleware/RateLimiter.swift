public import HTTPTypes

/// The seam for rate limiting (issue 5): asked before every routed request.
///
/// Limits must live in the shared store, not in process memory, so they hold across nodes.
public protocol RateLimiter: Sendable {
    /// Nil admits the request; a number of seconds answers `429 rate_limited` with `Retry-After`.
    ///
    /// - Parameters:
    ///   - route: the route template, such as `/v1/sessions/identify`.
    ///   - request: the request head (its credential decides the bucket; never log it).
    func retryAfterSeconds(route: String, request: HTTPRequest) async throws -> Int?
}
