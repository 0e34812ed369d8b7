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

    /// The request's credential; nil when there is no `Authorization` header.
    init?(headers: HTTPFields) {
        guard let header = headers[.authorization] else { return nil }
        let trimmed = header.drop { $0 == " " }
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else {
            self = .unknown
            return
        }
        let value = String(trimmed.dropFirst(7).drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        guard !value.isEmpty, value.utf8.count <= 8192 else {
            self = .unknown
            return
        }
        if value.hasPrefix("pk_") {
            self = .publishableKey(value)
        } else if value.hasPrefix("sk_") {
            self = .secretKey(value)
        } else if value.hasPrefix("st_") {
            self = .sessionToken(value)
        } else if value.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 {
            self = .jws(value)
        } else {
            self = .unknown
        }
    }
}
