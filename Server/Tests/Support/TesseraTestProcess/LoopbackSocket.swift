#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP socket bound to a free port of 127.0.0.1, for the tests that start servers.
///
/// A live server whose public URL must name its port before it listens takes ``freePort()``: a DPoP
/// proof's `htu` is the server's public URL and the path, so an SDK whose proofs name
/// `http://127.0.0.1:<port>` needs a server that knows that port (with port 0 it would call itself
/// `:0`). Another process could take the port before the server binds it; on this machine's tests that
/// has not been seen. A test of a busy port holds a ``listening()`` socket.
public struct LoopbackSocket: Sendable {
    /// The socket's descriptor; the caller closes it.
    public let descriptor: Int32
    /// The port it is bound to.
    public let port: Int

    /// Why a socket could not be made.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A socket bound to a free loopback port, listening when `listening` is set.
    static func open(listening: Bool) throws -> LoopbackSocket {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "no socket for a free port") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0, !listening || listen(descriptor, 1) == 0 else {
            close(descriptor)
            throw Failure(description: "cannot bind a free loopback port")
        }
        return LoopbackSocket(descriptor: descriptor, port: Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A loopback port that is free now (its socket is closed again).
    public static func freePort() throws -> Int {
        let socket = try open(listening: false)
        close(socket.descriptor)
        return socket.port
    }

    /// A listening socket on a free loopback port.
    public static func listening() throws -> LoopbackSocket { try open(listening: true) }
}
