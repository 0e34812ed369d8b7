import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// The rule of RFC 9112 §3.2 for the `Host` header of HTTP/1 requests, which ``TesseraMiddleware``
/// answers with `400 invalid_request`.
///
/// An HTTP/1.1 request needs exactly one `Host` header, and no request may have two. Hummingbird
/// converts requests to HTTP types, which forget the protocol version, so ``HTTP1ParseErrorResponder``
/// (between NIO's HTTP/1 decoder and that conversion) marks a bad request with ``markerName``
/// (removing any marker the client sent) and lets it through, so the answer keeps its order among
/// pipelined requests and goes through the middleware like every other error.
enum HTTP1HostCheck {
    /// The header that marks a request with a bad `Host`.
    static let markerName = "X-Tessera-Invalid-Host"

    /// The request head to pass on: `head` itself (no copy) when its `Host` is valid and it carries
    /// no marker, which is every request of a well-behaved client; else a copy, marked when invalid.
    static func checked(_ head: HTTPRequestHead) -> HTTPRequestHead? {
        var hosts = 0
        var valid = true
        var marked = false
        for header in head.headers {
            if header.name.utf8.count == 4, header.name.lowercased() == "host" {
                hosts += 1
                valid = valid && isValidHost(header.value)
            } else if header.name.utf8.count == markerName.utf8.count,
                header.name.lowercased() == markerName.lowercased()
            {
                marked = true
            }
        }
        valid = valid && (hosts == 1 || (hosts == 0 && head.version.major == 1 && head.version.minor == 0))
        if valid && !marked { return nil }
        var copy = head
        copy.headers.remove(name: markerName)
        if !valid { copy.headers.add(name: markerName, value: "1") }
        return copy
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
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "%"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"),
                UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
                UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "["),
                UInt8(ascii: "]"):
                return true
            default:
                return false
            }
        }
    }
}

/// Hummingbird's HTTP/1 child channel with ``HTTP1ParseErrorResponder`` (which also applies
/// ``HTTP1HostCheck``) inserted after the HTTP/1 decoder: one handler, so every request crosses one
/// extra pipeline step, not two.
struct TesseraHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel

    var responder: HTTPChannelHandler.Responder { base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandlers(
                [HTTP1ParseErrorResponder()], position: .after(decoder))
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
