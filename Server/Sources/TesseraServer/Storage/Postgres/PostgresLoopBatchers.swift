import NIOCore
import NIOPosix

/// Batched reads of one kind with a batcher per event loop, and a shared one for every other reader.
///
/// A reader that runs on one of the loops given at creation (the HTTP server's, when SwiftNIO's loops
/// are Swift's global executor) joins that loop's batches: they are sent from a task on the same
/// loop, on a connection of that loop, and the answer resumes the reader where it is, with no thread
/// hand-over either way. A reader anywhere else (Swift's own thread pool, another group's loop) goes
/// through ``shared``, as every reader did before (see docs/PERFORMANCE.md, "PostgreSQL heartbeat:
/// a batcher per event loop"). Each batcher keeps its own guarantees: a read never joins a batch
/// already sent, a batch has its deadline, and a connection that fails falls back to the pool.
final class PostgresLoopBatchers<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Lane: Sendable {
        let loop: any EventLoop
        let batcher: PostgresReadBatcher<Key, Value>
    }

    private let lanes: [Lane]
    /// The batcher of readers that are on none of the loops.
    let shared: PostgresReadBatcher<Key, Value>

    /// - Parameters:
    ///   - loops: the loops with a batcher of their own (none: every read goes through `shared`).
    ///   - shared: the batcher of every other reader.
    ///   - batcher: makes the batcher of one loop.
    init(
        loops: [any EventLoop], shared: PostgresReadBatcher<Key, Value>,
        batcher: (any EventLoop) -> PostgresReadBatcher<Key, Value>
    ) {
        self.shared = shared
        self.lanes = loops.map { Lane(loop: $0, batcher: batcher($0)) }
    }

    /// The batcher a read that runs on `loop` goes through.
    func batcher(on loop: (any EventLoop)?) -> PostgresReadBatcher<Key, Value> {
        if let loop {
            for lane in lanes where lane.loop === loop { return lane.batcher }
        }
        return shared
    }

    /// The value for `key`, read in a batch of the caller's event loop (or the shared one) that was
    /// sent after this call began.
    func load(_ key: Key) async throws -> Value? {
        try await batcher(on: MultiThreadedEventLoopGroup.currentEventLoop).load(key)
    }
}
