import Hummingbird
import NIOCore
import TesseraTokens

/// The request context of the server: Hummingbird's core storage, the connection (whose peer
/// address is read only when a rate limit needs the client's address), and what the request
/// authenticated as.
struct TesseraRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    private let channel: any Channel
    /// Set by ``Authenticator`` for the endpoint's credential before the handler runs.
    var authentication = Authentication.none
    /// The request's DPoP proof, verified by ``Authenticator`` (RFC 9449); nil when it sent none.
    var dpopProof: DPoPProof?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The socket's peer (nil in router tests, which have no socket).
    var remoteAddress: SocketAddress? { channel.remoteAddress }

    /// The session the request authenticated with.
    ///
    /// Only endpoints that take a session ask; for any other the answer is `invalid_credentials`,
    /// so a handler listed with the wrong credential fails closed.
    func session() throws -> Caller {
        guard case .session(let caller) = authentication else { throw CoreError.missingCredentials }
        return caller
    }

    /// The project the request authenticated for: its API key's, or its session's.
    func project() throws -> ProjectRuntime {
        switch authentication {
        case .project(let runtime): return runtime
        case .session(let caller): return caller.runtime
        case .none: throw CoreError.missingCredentials
        }
    }

    /// The session, when the request authenticated with one (identify takes a key or a session).
    var caller: Caller? {
        guard case .session(let caller) = authentication else { return nil }
        return caller
    }
}
