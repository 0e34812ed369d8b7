import HTTPTypes
import NIOCore

/// The address a request comes from, as the key of its rate-limit counters.
///
/// By default it is the socket's peer. Behind a reverse proxy every request comes from the proxy,
/// so the server can be told to trust one header the proxy sets (`--trusted-proxy-header`, for
/// example `X-Forwarded-For`): then the **right-most** address of that header is used, the one the
/// trusted proxy itself appended. Entries to its left were sent by the client and can be forged,
/// so they are never used. (With several proxies in a chain, the last one's view is taken.) A
/// `Forwarded` header (RFC 7239) is read the same way, from its right-most `for=`. When the header
/// is missing or does not hold an address, the socket's peer is used.
///
/// IPv6 clients are counted per /64, the block one subscriber usually holds, so rotating through
/// the addresses of one's own prefix does not escape a limit; IPv4-mapped IPv6 counts as IPv4.
enum ClientAddress {
    /// The counter key of a request's client.
    static func key(headers: HTTPFields, remote: SocketAddress?, trustedHeader: HTTPField.Name?) -> String {
        if let trustedHeader, let value = rightmost(headers[values: trustedHeader]),
            let address = try? SocketAddress(ipAddress: value, port: 0), let key = normalized(address)
        {
            return key
        }
        return remote.flatMap(normalized) ?? "unknown"
    }

    /// The right-most address of a forwarding header's values, without port, brackets or quotes.
    static func rightmost(_ values: [String]) -> String? {
        guard let last = values.last,
            let element = last.split(separator: ",", omittingEmptySubsequences: false).last
        else { return nil }
        var entry = trimmed(element)
        if entry.contains("=") {
            // Forwarded: for=192.0.2.43;proto=https, or for="[2001:db8::17]:4711"
            guard
                let parameter = entry.split(separator: ";").map(trimmed).first(where: {
                    $0.lowercased().hasPrefix("for=")
                })
            else { return nil }
            entry = Substring(parameter.dropFirst(4))
        }
        if entry.hasPrefix("\""), entry.hasSuffix("\""), entry.count >= 2 { entry = entry.dropFirst().dropLast() }
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else { return nil }
            entry = entry[entry.index(after: entry.startIndex)..<close]
        } else if entry.count(where: { $0 == ":" }) == 1, let colon = entry.firstIndex(of: ":") {
            entry = entry[..<colon]  // IPv4 with a port
        }
        return entry.isEmpty || entry.utf8.count > 64 ? nil : String(entry)
    }

    /// The dotted IPv4 address, or the /64 prefix of an IPv6 address.
    static func normalized(_ address: SocketAddress) -> String? {
        switch address {
        case .v4:
            return address.ipAddress
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            guard bytes.count == 16 else { return address.ipAddress }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return "\(bytes[12]).\(bytes[13]).\(bytes[14]).\(bytes[15])"
            }
            let groups = (0..<4).map { String(UInt16(bytes[$0 * 2]) << 8 | UInt16(bytes[$0 * 2 + 1]), radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        case .unixDomainSocket:
            return "unix"
        }
    }

    private static func trimmed<S: StringProtocol>(_ text: S) -> Substring {
        var text = Substring(text)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
