#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback port that is free now, for a live server whose public URL must name its port before it
/// listens: a DPoP proof's `htu` is the server's public URL and the path, so an SDK whose proofs name
/// `http://127.0.0.1:<port>` needs a server that knows that port (with port 0 it would call itself `:0`).
/// Another process could take the port before the server binds it; on this machine's tests that has
/// not been seen.
enum FreePort {
    static func loopback() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LiveServerError("no socket for a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw LiveServerError("cannot bind a free port") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw LiveServerError("cannot read the free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
