import Hummingbird
import NIOCore

/// The request context of the server: Hummingbird's core storage and the connection, whose peer
/// address is read only when a rate limit needs the client's address.
struct TesseraRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    private let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The socket's peer (nil in router tests, which have no socket).
    var remoteAddress: SocketAddress? { channel.remoteAddress }
}
