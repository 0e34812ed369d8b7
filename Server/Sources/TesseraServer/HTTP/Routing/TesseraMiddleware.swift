import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

/// Wraps every request: assigns its request ID (echoed in `X-Request-Id`), answers every error
/// in the JSON error shape, tells 404 from 405, and records metrics.
///
/// It also refuses session credentials from a client blocked for guessing them, on every path (the
/// ``Authenticator`` of each endpoint counts the ones that find no session; see ``RateLimiter``).
struct TesseraMiddleware: RouterMiddleware {
    typealias Context = TesseraRequestContext

    let routes: RouteTable
    let metrics: ServerMetrics
    let maximumBodySize: Int
    let rateLimiter: RateLimiter
    let addresses: ClientAddressReader
    /// Counts the requests in flight, for the drain's log.
    let activity: NodeActivity

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        activity.requestStarted()
        defer { activity.requestFinished() }
        // Hummingbird already gave the request an ID in the logger's metadata (TesseraLogHandler
        // prints it as `request_id`); it is replaced only when the client sent one of its own.
        let supplied = Self.requestID(from: request.headers)
        var response: Response
        do {
            try admit(request, context: context)
            if let supplied {
                var context = context
                context.logger[metadataKey: TesseraLogHandler.requestIDKey] = .string(supplied)
                response = try await next(request, context)
            } else {
                response = try await next(request, context)
            }
        } catch {
            response = errorResponse(error, request: request, context: context)
        }
        // Everything after the handler is synchronous, in a function of its own: this async frame, live
        // for the whole request, holds only what crosses the handler's suspension points.
        finish(&response, requestID: supplied ?? context.id, start: start, request: request, context: context)
        return response
    }

    /// Checks made before the handler: the `Host` mark, the declared body size, a client blocked for
    /// guessing session credentials.
    @inline(never)
    private func admit(_ request: Request, context: Context) throws {
        if request.headers[Self.invalidHost] != nil {
            throw CoreError.invalidRequest(
                "An HTTP/1.1 request needs exactly one Host header with a valid value (RFC 9112, section 3.2).")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maximumBodySize {
            throw CoreError.payloadTooLarge(maximumBodySize)
        }
        if !rateLimiter.blocks.isEmpty, Credential.isSession(request.headers) {
            try rateLimiter.admitSessionLookup(from: addresses.key(request, context: context))
        }
    }

    /// The request ID, `Cache-Control`, metrics and the log line of an answer.
    @inline(never)
    private func finish(
        _ response: inout Response, requestID: String, start: ContinuousClock.Instant, request: Request,
        context: Context
    ) {
        response.headers[.xRequestID] = requestID
        // Answers of the API hold credentials and personal data: no cache may keep them. (The JWKS too:
        // a rotated key signs at once, and a cached key set would refuse its JWTs at app backends.)
        // The path's bytes as received, or the route matched (a percent-encoded spelling of `/v1/`):
        // `request.uri.path` would build a String on every request.
        if request.head.path?.utf8.starts(with: "/v1/".utf8) == true
            || context.endpointPath?.utf8.starts(with: "/v1/".utf8) == true,
            response.headers[.cacheControl] == nil
        {
            response.headers[.cacheControl] = "no-store"
        }
        let route = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        metrics.recordRequest(
            route: route, method: request.method.rawValue, status: response.status.code,
            duration: start.duration(to: .now))
        // A node that is not ready says so to every probe of the load balancer: that is its answer, not a failure.
        if response.status.code >= 500, context.endpointPath != "/health/ready" {
            context.logger.error(
                "request failed",
                metadata: ["method": "\(request.method)", "route": "\(route)", "status": "\(response.status.code)"])
        } else {
            context.logger.debug(
                "request",
                metadata: ["method": "\(request.method)", "route": "\(route)", "status": "\(response.status.code)"])
        }
    }

    /// The answer to an error: core errors through their one mapping (``APIError/init(_:)``), and
    /// what only HTTP knows (framing, 404 or 405) here.
    @inline(never)
    private func errorResponse(_ error: any Error, request: Request, context: Context) -> Response {
        switch error {
        case let error as CoreError:
            return APIError(error).response()
        case let error as APIError:
            return error.response()
        case is NIOTooManyBytesError:
            return APIError(CoreError.payloadTooLarge(maximumBodySize)).response()
        case is HTTPParserError:
            // Malformed framing inside the body (a bad chunk size, a missing chunk CRLF, a body cut
            // short of its Content-Length): the client's fault, answered while the connection can
            // still carry an answer, then closed.
            return APIError(
                .badRequest, .invalidRequest, "The request's HTTP framing is not valid.",
                headers: [.connection: "close"]
            ).response()
        case let error as HTTPError where error.status == .notFound:
            let allowed = routes.allowedMethods(for: request.uri.path)
            if allowed.isEmpty || allowed.contains(request.method) {
                return APIError(CoreError(.notFound, "There is no such resource.")).response()
            }
            return APIError(
                .methodNotAllowed, .methodNotAllowed, "\(request.method) is not allowed here.",
                headers: [.allow: allowed.map(\.rawValue).joined(separator: ", ")]
            ).response()
        case let error as HTTPError where error.status.code < 500:
            return APIError(error.status, .invalidRequest, error.body ?? "The request is not valid.").response()
        case let error as MasterKeyError:
            // A value sealed under a key this node lacks (a node left out of a key rotation): the
            // message names key IDs only.
            context.logger.error("cannot open a sealed secret", metadata: ["error": "\(error)"])
            return APIError(CoreError(.serviceUnavailable, "The server cannot open this project's keys.")).response()
        default:
            context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return APIError(CoreError(.internalError, "An internal error occurred.")).response()
        }
    }

    /// A client-supplied request ID, when it is short and plain.
    static func requestID(from headers: HTTPFields) -> String? {
        guard let value = headers[.xRequestID], !value.isEmpty, value.utf8.count <= 128 else { return nil }
        let plain = value.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D
                || $0 == 0x5F || $0 == 0x2E || $0 == 0x3A
        }
        return plain ? value : nil
    }
}

extension HTTPField.Name {
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}

extension TesseraMiddleware {
    /// The mark ``HTTP1HostCheck`` puts on a request with a bad `Host`.
    static let invalidHost = HTTPField.Name(HTTP1HostCheck.markerName)!
}
