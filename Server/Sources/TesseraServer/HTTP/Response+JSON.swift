import HTTPTypes
import Hummingbird
import NIOCore

extension Response {
    /// A JSON answer, written by `write`.
    static func json(_ status: HTTPResponse.Status = .ok, _ write: (inout JSONWriter) -> Void) -> Response {
        var writer = JSONWriter()
        write(&writer)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

    /// An empty `204` answer.
    static var noContent: Response { Response(status: .noContent) }
}
