import HTTPTypes
import Hummingbird
import NIOCore

extension Response {
    /// A JSON answer, written by `write`.
    static func json(_ status: HTTPResponse.Status = .ok, _ write: (inout JSONWriter) -> Void) -> Response {
        var writer = JSONWriter()
        write(&writer)
        return .json(status, body: ByteBuffer(bytes: writer.bytes))
    }

    /// `{"name": [{…}, …]}`: a JSON answer listing `elements`, each an object whose members
    /// `members` writes.
    static func jsonObjects<Elements: Sequence>(
        _ name: StaticString, _ elements: Elements, _ members: (inout JSONWriter, Elements.Element) -> Void
    ) -> Response {
        .json { writer in
            writer.objectStart()
            writer.array(name, elements) { writer, element in
                writer.objectStart()
                members(&writer, element)
                writer.objectEnd()
            }
            writer.objectEnd()
        }
    }

    /// A JSON answer of `body`, with `headers` and the JSON content type.
    static func json(_ status: HTTPResponse.Status = .ok, body: ByteBuffer, headers: HTTPFields = [:]) -> Response {
        // Room for the fields added on the way out (Hummingbird's `Content-Length`, `X-Request-Id`,
        // `Cache-Control`, and what the server adds as it writes the head), so that none of them grows
        // the storage; `consume` hands the one storage over (a copy would lose the capacity).
        var fields = headers
        fields.reserveCapacity(headers.count + 6)
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: consume fields, body: .init(byteBuffer: body))
    }

    /// An empty `204` answer.
    static var noContent: Response { Response(status: .noContent) }
}
