import Hummingbird
import NIOCore

/// Reads request bodies: at most the configured size, decoded as strict JSON objects
/// (``RequestJSON``); every failure is a core error (`payload_too_large`, `invalid_request`).
struct BodyReader: Sendable {
    let maximumBodySize: Int

    /// The request body, at most `maximumBodySize` bytes.
    func body(of request: Request) async throws -> ByteBuffer {
        var request = request
        do {
            return try await request.collectBody(upTo: maximumBodySize)
        } catch is NIOTooManyBytesError {
            throw CoreError.payloadTooLarge(maximumBodySize)
        }
    }

    /// Decodes a JSON object body; a request without one is refused.
    /// A body of only whitespace is not JSON and is refused like any other malformed body.
    func decode<T: RequestBody>(_ type: T.Type, from request: Request) async throws -> T {
        guard let value = try await decodeIfPresent(type, from: request) else {
            throw CoreError.invalidRequest("The request needs a JSON object body.")
        }
        return value
    }

    /// Whether the request may carry a body: HTTP/1.1 with no `Transfer-Encoding` and no (or a zero)
    /// `Content-Length` has none.
    static func mayHaveBody(_ request: Request) -> Bool {
        request.headers[.transferEncoding] != nil || request.headers[.contentLength].map({ $0 != "0" }) ?? false
    }

    /// Decodes a JSON object body, or returns nil for an empty body (zero bytes) without decoding anything.
    func decodeIfPresent<T: RequestBody>(_ type: T.Type, from request: Request) async throws -> T? {
        // Waiting for the end of a body stream that cannot have one still suspends the handler; skip it.
        guard Self.mayHaveBody(request) else { return nil }
        var buffer = try await body(of: request)
        guard buffer.readableBytes > 0 else { return nil }
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        return try RequestJSON.decode(type, from: bytes)
    }
}
