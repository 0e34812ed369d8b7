import HTTPTypes
import Hummingbird
import NIOCore
import TesseraTokens

/// What the console reads from requests and writes on responses: form bodies, cookies, its
/// security headers, redirects and HTML answers.
enum ConsoleHTTP {
    /// The cookie of a console session (HttpOnly, SameSite=Strict).
    static let sessionCookie = "tessera_console"
    /// The cookie that pairs a sign-in or enrollment form with its browser (double-submit CSRF token).
    static let formCookie = "tessera_console_form"
    /// The cookie of the selected project.
    static let projectCookie = "tessera_console_project"
    /// The largest form the console reads.
    static let maximumFormSize = 65_536

    /// The policy of every console page: its own styles and script only, no frames, forms post only
    /// to the console, nothing from any other origin.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// An HTML answer with the console's headers.
    static func html(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        secure(&fields)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A `303 See Other` to a console page (a relative `Location`, so it works behind a path prefix).
    static func redirect(_ url: ConsoleURL, headers: HTTPFields = [:]) -> Response {
        redirect(location: url.relative, headers: headers)
    }

    static func redirect(location: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.location] = location
        secure(&fields)
        return Response(status: .seeOther, headers: fields)
    }

    /// The headers every console answer carries.
    static func secure(_ fields: inout HTTPFields) {
        fields[.contentSecurityPolicy] = contentSecurityPolicy
        fields[.xContentTypeOptions] = "nosniff"
        fields[.xFrameOptions] = "DENY"
        fields[.referrerPolicy] = "no-referrer"
        fields[.cacheControl] = "no-store"
        fields[.crossOriginOpenerPolicy] = "same-origin"
    }

    // MARK: Cookies

    /// The value of the cookie `name`, if the request sent one.
    static func cookie(_ name: String, in request: Request) -> String? {
        for field in request.headers[values: .cookie] {
            for pair in field.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " })
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                if trimmed[..<equals] == name {
                    return String(trimmed[trimmed.index(after: equals)...])
                }
            }
        }
        return nil
    }

    /// A `Set-Cookie` value: HttpOnly and SameSite=Strict always, Secure unless the request came over
    /// plain HTTP to a loopback address (a browser drops a Secure cookie from `http://127.0.0.1`).
    /// No `Path`: the browser keeps the cookie for the console's directory, wherever a proxy mounts it.
    static func setCookie(_ name: String, _ value: String, maxAge: Int?, request: Request) -> String {
        var text = "\(name)=\(value); HttpOnly; SameSite=Strict"
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        if !isPlainLoopback(request) { text += "; Secure" }
        return text
    }

    /// Whether the request reached the server over plain HTTP at a loopback address (development):
    /// an IPv4 address of 127.0.0.0/8 written as four decimal numbers, `[::1]`, or the name
    /// `localhost` exactly (reserved for loopback by RFC 6761). No other host name is loopback here,
    /// not even one that starts with `127.` (`127.0.0.1.example.com`).
    static func isPlainLoopback(_ request: Request) -> Bool {
        if let proto = request.headers[.xForwardedProto], proto.lowercased() == "https" { return false }
        guard let authority = request.head.authority else { return false }
        return isLoopback(authority: authority)
    }

    /// Whether an `authority` (host and optional port) names a loopback address.
    static func isLoopback(authority: String) -> Bool {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return false }
            return isIPv6Loopback(authority[authority.index(after: authority.startIndex)..<close])
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.count == 1 || isPort(parts[1]) else { return false }
        if parts[0].lowercased() == "localhost" { return true }
        let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4,
            octets.allSatisfy({ octet in
                (1...3).contains(octet.count) && octet.allSatisfy { ("0"..."9").contains($0) }
                    && Int(octet).map { $0 <= 255 } == true
            })
        else { return false }
        return octets[0] == "127"
    }

    private static func isPort(_ text: Substring) -> Bool {
        (1...5).contains(text.count) && text.allSatisfy { ("0"..."9").contains($0) }
    }

    /// `::1` in any of its spellings (`0:0:0:0:0:0:0:1`, `::0:1`…).
    private static func isIPv6Loopback(_ text: Substring) -> Bool {
        let halves = text.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false)
        func groups(_ part: Substring) -> [Substring]? {
            guard !part.isEmpty else { return [] }
            let groups = part.split(separator: ":", omittingEmptySubsequences: false)
            guard groups.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(\.isHexDigit) }) else { return nil }
            return groups
        }
        var values: [UInt16]
        if halves.count == 2 {
            guard let head = groups(halves[0]), let tail = groups(halves[1]), head.count + tail.count <= 7 else {
                return false
            }
            values =
                head.compactMap { UInt16($0, radix: 16) } + Array(repeating: 0, count: 8 - head.count - tail.count)
                + tail.compactMap { UInt16($0, radix: 16) }
        } else {
            guard let all = groups(halves[0]), all.count == 8 else { return false }
            values = all.compactMap { UInt16($0, radix: 16) }
        }
        return values == [0, 0, 0, 0, 0, 0, 0, 1]
    }

    // MARK: Forms

    /// A form body (`application/x-www-form-urlencoded`), at most ``maximumFormSize`` bytes.
    static func form(_ request: Request) async throws -> ConsoleForm {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumFormSize)
        } catch is NIOTooManyBytesError {
            throw CoreError.payloadTooLarge(maximumFormSize)
        }
        guard let form = ConsoleForm(urlEncoded: Array(buffer.readableBytesView)) else {
            throw CoreError.invalidRequest("The form is not valid URL-encoded UTF-8.")
        }
        return form
    }

    /// The query string of a request as a form.
    static func query(_ request: Request) -> ConsoleForm {
        guard let query = request.uri.query else { return ConsoleForm(fields: []) }
        return ConsoleForm(urlEncoded: Array(query.utf8)) ?? ConsoleForm(fields: [])
    }

    /// 32 random bytes, base64url: a CSRF token.
    static func randomToken() -> String { OpaqueToken.generate(prefix: "") }
}

/// The fields of a form or a query string, in order; the first of a repeated name wins.
struct ConsoleForm: Sendable {
    var fields: [(name: String, value: String)]

    init(fields: [(name: String, value: String)]) { self.fields = fields }

    /// Parses `a=1&b=x+y%20z`; nil when a percent escape or the UTF-8 is broken.
    init?(urlEncoded bytes: [UInt8]) {
        var fields: [(String, String)] = []
        for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), let value = Self.decode(parts.count > 1 ? parts[1] : [])
            else { return nil }
            fields.append((name, value))
        }
        self.fields = fields
    }

    subscript(_ name: String) -> String? { fields.first(where: { $0.name == name })?.value }

    /// The field, trimmed, or nil when absent or empty.
    func value(_ name: String) -> String? {
        guard let value = self[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2])
                else { return nil }
                output.append(high << 4 | low)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return String(validating: output, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension HTTPField.Name {
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let crossOriginOpenerPolicy = HTTPField.Name("Cross-Origin-Opener-Policy")!
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}

extension ConsoleAssets {
    /// An asset's answer: cacheable for an hour (it changes only with the server's version).
    static func response(_ asset: Asset) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = asset.contentType
        ConsoleHTTP.secure(&fields)
        fields[.cacheControl] = "public, max-age=3600"
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }
}
