import Hummingbird
import NIOCore

extension APIError: HTTPResponseError {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    /// The JSON error response.
    func response() -> Response {
        let reason = reason
        let body = Self.body(code: code, message: message) { writer in
            if let reason { writer.field("reason", reason) }
        }
        return .json(status, body: ByteBuffer(bytes: body), headers: headers)
    }

    /// The error shape of every answer: `{"error": {"code", "message"}}`; `details` writes members of
    /// its own after them (the readiness of a node that is not ready).
    static func body(code: Code, message: String, details: (inout JSONWriter) -> Void = { _ in }) -> [UInt8] {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("error")
        writer.objectStart()
        writer.field("code", code.rawValue)
        writer.field("message", message)
        details(&writer)
        writer.objectEnd()
        writer.objectEnd()
        return writer.bytes
    }
}
