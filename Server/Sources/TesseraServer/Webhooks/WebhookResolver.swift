import Foundation
import NIOPosix

/// Resolves a host name to its addresses with the system resolver, off the concurrency pool.
public enum WebhookResolver {
    /// Every IPv4 and IPv6 address `host` resolves to (an IP literal resolves to itself).
    public static func resolve(_ host: String) async throws -> [IPAddressBytes] {
        if let literal = IPAddressBytes(host) { return [literal] }
        return try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            #if canImport(Darwin)
                hints.ai_socktype = SOCK_STREAM
            #else
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #endif
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, nil, &hints, &list)
            guard status == 0, let first = list else { throw ResolutionError(host: host) }
            defer { freeaddrinfo(first) }
            var addresses: [IPAddressBytes] = []
            var cursor: UnsafeMutablePointer<addrinfo>? = first
            while let entry = cursor {
                if let address = entry.pointee.ai_addr {
                    switch Int32(address.pointee.sa_family) {
                    case AF_INET:
                        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                            var value = $0.pointee.sin_addr
                            addresses.append(IPAddressBytes(bytes: withUnsafeBytes(of: &value) { Array($0) }))
                        }
                    case AF_INET6:
                        address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                            var value = $0.pointee.sin6_addr
                            addresses.append(IPAddressBytes(bytes: withUnsafeBytes(of: &value) { Array($0) }))
                        }
                    default: break
                    }
                }
                cursor = entry.pointee.ai_next
            }
            guard !addresses.isEmpty else { throw ResolutionError(host: host) }
            var unique: [IPAddressBytes] = []
            for address in addresses where !unique.contains(address) { unique.append(address) }
            return unique
        }
    }

    /// The name did not resolve.
    public struct ResolutionError: Error, Sendable {
        public var host: String
    }
}
