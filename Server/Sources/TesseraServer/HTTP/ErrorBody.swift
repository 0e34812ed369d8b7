import Hummingbird
import NIOCore

extension APIError: HTTPResponseError {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    /// The JSON error response.
    func response() -> Response {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("error")
        writer.objectStart()
        writer.field("code", code.rawValue)
        writer.field("message", message)
        writer.objectEnd()
        writer.objectEnd()
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }
}
