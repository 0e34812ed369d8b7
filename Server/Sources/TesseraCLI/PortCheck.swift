#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether `serve` can listen at its host and port, checked before anything is created or printed.
enum PortCheck {
    /// True when another process listens at `host`:`port` (binding a socket of our own fails with
    /// `EADDRINUSE`); false when the address is free or cannot be tried here (`serve` reports those).
    static func isInUse(host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &result) == 0, let first = result else {
            return false
        }
        defer { freeaddrinfo(result) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { return false }
        defer { _ = close(descriptor) }
        // As the server does: an address in TIME_WAIT is not in use.
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0 else { return false }
        return errno == EADDRINUSE
    }
}
