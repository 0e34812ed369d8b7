import HTTPTypes

/// The credential of a request, read from `Authorization: Bearer …` or `Authorization: DPoP …` only
/// (never the query string).
enum Credential: Sendable {
    case publishableKey(String)
    case secretKey(String)
    case sessionToken(String)
    /// A compact JWS: a session JWT, or an identity token sent where it does not belong.
    case jws(String)
    /// Something that is none of the above.
    case unknown

    /// The kinds of credential, told apart by their form.
    enum Kind {
        case publishableKey, secretKey, sessionToken, jws, unknown
    }

    /// The request's credential; nil when there is no `Authorization` header.
    ///
    /// The scheme is matched case-insensitively; spaces around the value are ignored. This runs on
    /// every authenticated request, so it works on the header's UTF-8 bytes and builds one `String`
    /// at most.
    init?(headers: HTTPFields) {
        guard let header = headers[.authorization] else { return nil }
        let (kind, value) = Self.classify(header)
        switch kind {
        case .publishableKey: self = .publishableKey(String(Substring(value)))
        case .secretKey: self = .secretKey(String(Substring(value)))
        case .sessionToken: self = .sessionToken(String(Substring(value)))
        case .jws: self = .jws(String(Substring(value)))
        case .unknown: self = .unknown
        }
    }

    /// Whether the request carries a session credential (a session token or a JWS), read without
    /// building any string.
    static func isSession(_ headers: HTTPFields) -> Bool {
        guard let header = headers[.authorization] else { return false }
        switch classify(header).kind {
        case .sessionToken, .jws: return true
        case .publishableKey, .secretKey, .unknown: return false
        }
    }

    /// Whether `Authorization` uses the `DPoP` scheme (RFC 9449 §7.1) rather than `Bearer`.
    static func usesDPoPScheme(_ headers: HTTPFields) -> Bool {
        guard let header = headers[.authorization] else { return false }
        var value = Substring(header).utf8[...]
        while value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        return usesDPoPScheme(value)
    }

    private static func usesDPoPScheme(_ value: Substring.UTF8View) -> Bool {
        value.prefix(5).elementsEqual("dpop ".utf8, by: { $0 | 0x20 == $1 })
    }

    /// The credential's text (what a DPoP proof's `ath` covers); nil for an unknown one.
    var text: String? {
        switch self {
        case .publishableKey(let value), .secretKey(let value), .sessionToken(let value), .jws(let value): value
        case .unknown: nil
        }
    }

    /// Whether this is a session credential (a session token or a JWS).
    var isSession: Bool {
        switch self {
        case .sessionToken, .jws: true
        case .publishableKey, .secretKey, .unknown: false
        }
    }

    /// The kind of an `Authorization` value and its bearer credential (spaces trimmed).
    private static func classify(_ header: String) -> (kind: Kind, value: Substring.UTF8View) {
        var value = Substring(header).utf8[...]
        while value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        // `Bearer`, or `DPoP` for a credential sent with a proof of possession (RFC 9449 §7.1).
        if value.count > 7, value.prefix(7).elementsEqual("bearer ".utf8, by: { $0 | 0x20 == $1 }) {
            value = value.dropFirst(7)
        } else if value.count > 5, usesDPoPScheme(value) {
            value = value.dropFirst(5)
        } else {
            return (.unknown, value)
        }
        while value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        while value.last == UInt8(ascii: " ") { value = value.dropLast() }
        guard !value.isEmpty, value.count <= 8192 else { return (.unknown, value) }
        let prefix = value.prefix(3)
        if prefix.elementsEqual("pk_".utf8) { return (.publishableKey, value) }
        if prefix.elementsEqual("sk_".utf8) { return (.secretKey, value) }
        if prefix.elementsEqual("st_".utf8) { return (.sessionToken, value) }
        if value.count(where: { $0 == UInt8(ascii: ".") }) == 2 { return (.jws, value) }
        return (.unknown, value)
    }
}
