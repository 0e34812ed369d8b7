import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Marks HTTP/1 requests whose `Host` header breaks RFC 9112 §3.2, for ``TesseraMiddleware`` to
/// answer `400 invalid_request`.
///
/// An HTTP/1.1 request needs exactly one `Host` header, and no request may have two. Hummingbird
/// converts requests to HTTP types, which forget the protocol version, so this handler sits between
/// NIO's HTTP/1 decoder and that conversion: it marks a bad request with ``markerName`` (removing
/// any marker the client sent) and lets it through, so the answer keeps its order among pipelined
/// requests and goes through the middleware like every other error.
final class HTTP1HostCheck: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The header that marks a request with a bad `Host`.
    static let markerName = "X-Tessera-Invalid-Host"

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        head.headers.remove(name: Self.markerName)
        if !Self.isValid(hosts: head.headers["Host"], version: head.version) {
            head.headers.add(name: Self.markerName, value: "1")
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// Exactly one valid `Host` for HTTP/1.1 and later; at most one (valid) before.
    static func isValid(hosts: [String], version: HTTPVersion) -> Bool {
        switch hosts.count {
        case 0: return version.major == 1 && version.minor == 0
        case 1: return isValidHost(hosts[0])
        default: return false
        }
    }

    /// `uri-host [":" port]` (RFC 3986): unreserved, percent-encoded and sub-delimiter characters,
    /// brackets of an IP literal and the port's colon. Empty is allowed (an empty authority).
    static func isValidHost(_ value: String) -> Bool {
        value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return Array("-._~%!$&'()*+,;=:[]".utf8).contains(byte)
            }
        }
    }
}

/// Hummingbird's HTTP/1 child channel with ``HTTP1HostCheck`` and ``HTTP1ParseErrorResponder``
/// inserted after the HTTP/1 decoder.
struct TesseraHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel

    var responder: HTTPChannelHandler.Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandlers(
                [HTTP1ParseErrorResponder(), HTTP1HostCheck()], position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with ``HTTP1HostCheck``.
    static var tesseraHTTP1: HTTPServerBuilder {
        HTTPServerBuilder { responder in TesseraHTTP1Channel(base: HTTP1Channel(responder: responder)) }
    }
}
