import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// A plain-HTTP receiver on 127.0.0.1 for webhook tests: it records every request and answers each
/// with a fixed status, or never answers.
final class WebhookReceiver: Sendable {
    /// One request as received.
    struct Received: Sendable {
        var head: String
        /// Header names lower-cased.
        var headers: [String: String]
        var body: [UInt8]
    }

    enum Mode: Sendable {
        case status(Int)
        /// Answers with this status and body.
        case answer(Int, body: [UInt8])
        /// Reads the request and never answers.
        case silent
    }

    let port: Int
    /// The requests, in the order they arrived.
    let requests: AsyncStream<Received>
    private let channel: any Channel
    private let task: Task<Void, Never>

    private init(port: Int, requests: AsyncStream<Received>, channel: any Channel, task: Task<Void, Never>) {
        self.port = port
        self.requests = requests
        self.channel = channel
        self.task = task
    }

    var url: String { "http://127.0.0.1:\(port)/hook" }

    static func start(_ mode: Mode) async throws -> WebhookReceiver {
        let (stream, continuation) = AsyncStream.makeStream(of: Received.self)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let channel = server.channel
        let port = try #require(channel.localAddress?.port)
        let task = Task {
            try? await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { try? await serve(connection, mode: mode, record: continuation) }
                    }
                }
            }
            continuation.finish()
        }
        return WebhookReceiver(port: port, requests: stream, channel: channel, task: task)
    }

    private static func serve(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, mode: Mode,
        record: AsyncStream<Received>.Continuation
    ) async throws {
        try await connection.executeThenClose { input, output in
            var bytes: [UInt8] = []
            var answered = false
            for try await chunk in input {
                bytes += Array(chunk.readableBytesView)
                guard !answered, let request = parse(bytes) else { continue }
                answered = true
                record.yield(request)
                let (status, body): (Int, [UInt8])
                switch mode {
                case .status(let code): (status, body) = (code, Array("ok".utf8))
                case .answer(let code, let bytes): (status, body) = (code, bytes)
                case .silent: continue
                }
                var answer = ByteBuffer(
                    string: "HTTP/1.1 \(status) Test\r\ncontent-length: \(body.count)\r\nconnection: close\r\n\r\n")
                answer.writeBytes(body)
                try await output.write(answer)
                return
            }
        }
    }

    /// The request once all of it arrived (by `content-length`).
    private static func parse(_ bytes: [UInt8]) -> Received? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard
            let end = (0...max(0, bytes.count - 4)).first(where: {
                Array(bytes[$0..<min($0 + 4, bytes.count)]) == separator
            })
        else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        guard bytes.count - end - 4 >= length else { return nil }
        return Received(head: lines[0], headers: headers, body: Array(bytes[(end + 4)..<(end + 4 + length)]))
    }

    /// The next request received.
    func next() async -> Received? {
        var iterator = requests.makeAsyncIterator()
        return await iterator.next()
    }

    func stop() async {
        try? await channel.close()
        task.cancel()
        await task.value
    }
}
