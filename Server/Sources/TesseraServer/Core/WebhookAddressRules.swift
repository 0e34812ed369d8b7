import Foundation

/// The outbound-safety rules of webhooks: `https` only, and no loopback, link-local, private or
/// unspecified address, unless insecure webhooks are allowed (development and tests).
///
/// ``checkURL(_:allowInsecure:)`` judges a URL as written (when a webhook is created or changed);
/// ``isAllowed(_:)`` judges each address a name resolves to (on every delivery attempt).
public enum WebhookAddressRules {
    /// The longest webhook URL accepted.
    public static let maximumURLLength = 2048

    /// A URL broken into what a delivery needs.
    public struct Target: Sendable, Hashable {
        /// `https` or (insecure webhooks only) `http`.
        public var scheme: String
        /// The host as written, without the brackets of an IPv6 literal, lower-cased.
        public var host: String
        /// The port written in the URL; nil for the scheme's default.
        public var port: Int?
        /// The URL to request: as written, with a host name lower-cased and without a trailing dot,
        /// so the HTTP client sees exactly ``host``.
        public var url: String
    }

    /// Why a URL is refused; the message is for people.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses `url` and applies every rule that does not need DNS.
    public static func checkURL(_ url: String, allowInsecure: Bool) throws(Refusal) -> Target {
        guard url.utf8.count <= maximumURLLength,
            !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }),
            let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            var host = components.host?.lowercased(), !host.isEmpty
        else { throw Refusal(message: "url must be an absolute https URL of at most \(maximumURLLength) characters.") }
        guard scheme == "https" || (allowInsecure && scheme == "http") else {
            throw Refusal(message: "url must use https.")
        }
        guard components.user == nil, components.password == nil else {
            throw Refusal(message: "url must not carry a user name or password.")
        }
        guard components.percentEncodedHost?.contains("%") != true else {
            throw Refusal(message: "url's host must not be percent-encoded or carry a zone.")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        let port = components.port
        if let port, !(1...65535).contains(port) { throw Refusal(message: "url has an invalid port.") }
        if !allowInsecure {
            if host == "localhost" || host.hasSuffix(".localhost") {
                throw Refusal(message: "url must not point at a loopback, link-local or private address.")
            }
            if let address = IPAddressBytes(host), !isAllowed(address) {
                throw Refusal(message: "url must not point at a loopback, link-local or private address.")
            }
        }
        var normalized = url
        if IPAddressBytes(host) == nil {
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            guard host.utf8.count <= 253,
                labels.allSatisfy({ label in
                    !label.isEmpty && label.utf8.count <= 63
                        && label.utf8.allSatisfy {
                            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D
                        }
                })
            else { throw Refusal(message: "url's host must be an IP address or an ASCII host name (punycode).") }
            var rebuilt = components
            rebuilt.host = host
            normalized = rebuilt.string ?? url
        }
        return Target(scheme: scheme, host: host, port: port, url: normalized)
    }

    /// Whether a delivery may connect to `address`: not loopback, link-local, private, unspecified,
    /// multicast or otherwise reserved (an IPv4-mapped IPv6 address is judged as its IPv4 address).
    public static func isAllowed(_ address: IPAddressBytes) -> Bool {
        let b = address.bytes
        if b.count == 4 {
            switch (b[0], b[1]) {
            case (0, _), (10, _), (127, _), (169, 254), (192, 168): return false
            case (172, 16...31), (100, 64...127), (198, 18...19): return false
            case (192, 0) where b[2] == 0 || b[2] == 2: return false
            case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return false
            case (224...255, _): return false
            default: return true
            }
        }
        guard b.count == 16 else { return false }
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated) carry an IPv4 address.
        if b[0..<10].allSatisfy({ $0 == 0 }), (b[10] == 0xFF && b[11] == 0xFF) || (b[10] == 0 && b[11] == 0) {
            if b[10] == 0, b[12..<16].allSatisfy({ $0 == 0 }) || b[12..<15].allSatisfy({ $0 == 0 }) {
                return false  // :: and ::1
            }
            return isAllowed(IPAddressBytes(bytes: Array(b[12..<16])))
        }
        if b[0] & 0xFE == 0xFC { return false }  // fc00::/7, unique local
        if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return false }  // fe80::/10, link-local
        if b[0] == 0xFE, b[1] & 0xC0 == 0xC0 { return false }  // fec0::/10, site-local (deprecated)
        if b[0] == 0xFF { return false }  // multicast
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0D, b[3] == 0xB8 { return false }  // 2001:db8::/32, documentation
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xFF, b[3] == 0x9B { return false }  // 64:ff9b::/96, NAT64
        return true
    }
}

/// The bytes of an IPv4 (4) or IPv6 (16) address.
public struct IPAddressBytes: Sendable, Hashable, CustomStringConvertible {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses a numeric IPv4 or IPv6 address (no brackets, no zone); nil for anything else.
    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if text.withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if text.withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// The address in its usual text form.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: 64)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return "" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
