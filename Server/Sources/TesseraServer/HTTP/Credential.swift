import HTTPTypes

/// The credential of a request, read from `Authorization: Bearer …` only (never the query string).
enum Credential: Sendable {
    case publishableKey(String)
    case secretKey(String)
    case sessionToken(String)
    /// A compact JWS: a session JWT, or an identity token sent where it does not belong.
    case jws(String)
    /// Something that is none of the above.
    case unknown

    /// Whether the request carries a session credential (a session token or a JWS).
    static func isSession(_ headers: HTTPFields) -> Bool {
        switch Credential(headers: headers) {
        case .sessionToken, .jws: true
        default: false
        }
    }

    /// The request's credential; nil when there is no `Authorization` header.
    ///
    /// The scheme is matched case-insensitively; spaces around the value are ignored. This runs on
    /// every request, so it works on the header's UTF-8 bytes and builds one `String` at most.
    init?(headers: HTTPFields) {
        guard let header = headers[.authorization] else { return nil }
        var value = Substring(header).utf8[...]
        while value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        guard value.count > 7, value.prefix(7).elementsEqual("bearer ".utf8, by: { $0 | 0x20 == $1 }) else {
            self = .unknown
            return
        }
        value = value.dropFirst(7)
        while value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        while value.last == UInt8(ascii: " ") { value = value.dropLast() }
        guard !value.isEmpty, value.count <= 8192 else {
            self = .unknown
            return
        }
        let prefix = value.prefix(3)
        let string = String(Substring(value))
        if prefix.elementsEqual("pk_".utf8) {
            self = .publishableKey(string)
        } else if prefix.elementsEqual("sk_".utf8) {
            self = .secretKey(string)
        } else if prefix.elementsEqual("st_".utf8) {
            self = .sessionToken(string)
        } else if value.count(where: { $0 == UInt8(ascii: ".") }) == 2 {
            self = .jws(string)
        } else {
            self = .unknown
        }
    }
}
