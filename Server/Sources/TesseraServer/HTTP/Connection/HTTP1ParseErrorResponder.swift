import NIOCore
import NIOHTTP1

/// Answers a request that NIO's HTTP/1 decoder cannot even read (a broken request line or header)
/// with `400 invalid_request` in the API's error shape, then closes the connection; and marks a
/// request whose `Host` breaks RFC 9112 §3.2 (``HTTP1HostCheck``) for the middleware to refuse.
///
/// Errors inside a request's body reach the handler reading it, and ``TesseraMiddleware`` answers
/// them. An error between requests never reaches the middleware: Hummingbird would answer a bare
/// 400 without a body. This handler sits after the decoder, counts the requests it passed on and the
/// responses written back, and answers only when no request is open, so it never writes into
/// another request's response.
final class HTTP1ParseErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var requests = 0
    private var responses = 0
    private var readingRequest = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requests += 1
            readingRequest = true
            if let marked = HTTP1HostCheck.checked(head) {
                context.fireChannelRead(wrapInboundOut(.head(marked)))
                return
            }
        case .body: break
        case .end: readingRequest = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { responses += 1 }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !readingRequest, requests == responses else {
            context.fireErrorCaught(error)
            return
        }
        let body = APIError.body(code: .invalidRequest, message: "The request is not valid HTTP/1.1.")
        let headers: HTTPHeaders = [
            "Content-Type": "application/json; charset=utf-8", "Content-Length": String(body.count),
            "Connection": "close", "Cache-Control": "no-store",
        ]
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))),
            promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
