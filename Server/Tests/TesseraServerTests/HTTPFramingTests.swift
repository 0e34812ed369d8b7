import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import TesseraServer

/// Malformed HTTP/1 framing and `Host` headers over a raw TCP socket: client errors (400 in the API's
/// error shape), never a 5xx.
@Suite("HTTP framing (raw sockets)")
struct HTTPFramingTests {
    /// Sends `request` as is, half-closes, and returns everything the server wrote until it closed.
    static func exchange(port: Int, _ request: String) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            outbound.finish()
            var received = ByteBuffer()
            for try await chunk in inbound { received.writeImmutableBuffer(chunk) }
            return String(buffer: received)
        }
    }

    /// The status line and the JSON error code of the first response in `text`.
    static func firstAnswer(_ text: String) -> (status: String, code: String?) {
        let bytes = Array(text.utf8)
        let status = text.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        guard let headerEnd = text.range(of: "\r\n\r\n") else { return (status, nil) }
        let head = text[..<headerEnd.lowerBound].lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return (status, nil) }
        let start = text.utf8.distance(
            from: text.utf8.startIndex, to: headerEnd.upperBound.samePosition(in: text.utf8)!)
        guard bytes.count >= start + length,
            let json = try? JSONSerialization.jsonObject(with: Data(bytes[start..<start + length])) as? [String: Any]
        else { return (status, nil) }
        return (status, (json["error"] as? [String: Any])?["code"] as? String)
    }

    @Test(
        "Bad chunked framing and short bodies are 400 invalid_request",
        arguments: [
            // A chunk size that is not hex.
            "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            // A chunk size that overflows.
            "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffffffff\r\n{}\r\n0\r\n\r\n",
            // A chunk without its CRLF.
            "Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
            // A body shorter than its Content-Length, then the client stops sending.
            "Content-Length: 100\r\n\r\n{\"installation_id\":",
        ])
    func badFraming(framing: String) async throws {
        try await TestEnvironment.withApp(.live) { environment, client in
            let port = try #require(client.client.port)
            let request =
                "POST /v1/sessions/anonymous HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(client.publishableKey)\r\n"
                + "Content-Type: application/json\r\n" + framing
            let answer = Self.firstAnswer(try await Self.exchange(port: port, request))
            #expect(answer.status.hasPrefix("HTTP/1.1 400"), "\(answer.status)")
            #expect(answer.code == "invalid_request")
            // The server is fine afterwards.
            #expect(try await client.send(.get, "/health").status == .ok)
        }
    }

    @Test(
        "A request NIO cannot parse at all is 400 in the API's error shape, not a bare 400",
        arguments: [
            "GARBAGE\r\n\r\n", "GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        ])
    func unparseable(request: String) async throws {
        try await TestEnvironment.withApp(.live) { environment, client in
            let port = try #require(client.client.port)
            let answer = Self.firstAnswer(try await Self.exchange(port: port, request))
            #expect(answer.status.hasPrefix("HTTP/1.1 400"), "\(answer.status)")
            #expect(answer.code == "invalid_request")
            #expect(try await client.send(.get, "/health").status == .ok)
        }
    }

    @Test(
        "HTTP/1.1 needs exactly one valid Host header; HTTP/1.0 may have none",
        arguments: [
            ("GET /v1/me HTTP/1.1\r\n\r\n", false),
            ("GET /v1/me HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", false),
            ("GET /v1/me HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", false),
            ("GET /v1/me HTTP/1.1\r\nHost: a b\r\n\r\n", false),
            ("GET /v1/me HTTP/1.1\r\nHost: localhost:8080\r\n\r\n", true),
            ("GET /v1/me HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", true),
            ("GET /v1/me HTTP/1.0\r\n\r\n", true),
            ("GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Tessera-Invalid-Host: 1\r\n\r\n", true),
        ])
    func host(request: String, valid: Bool) async throws {
        try await TestEnvironment.withApp(.live) { environment, client in
            let port = try #require(client.client.port)
            let answer = Self.firstAnswer(try await Self.exchange(port: port, request))
            if valid {
                // A valid request reaches the endpoint: 401, no credential.
                #expect(answer.status.hasPrefix("HTTP/1.1 401"), "\(answer.status)")
            } else {
                #expect(answer.status.hasPrefix("HTTP/1.1 400"), "\(answer.status)")
                #expect(answer.code == "invalid_request")
            }
        }
    }
}
