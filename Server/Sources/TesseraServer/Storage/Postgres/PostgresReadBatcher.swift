import NIOCore
import NIOPosix
import Synchronization

/// Coalesces concurrent point reads of one kind into one query.
///
/// Every request with a session credential starts with one indexed lookup. Sent one by one, each
/// lookup costs a pooled connection, a round trip and the driver's per-query work, far more than
/// the lookup itself. Here a read that arrives while ``maximumInFlight`` batches are already out
/// waits; when a batch comes back, everything that arrived meanwhile goes out as the next batch, in
/// one `= ANY($1)` query. An idle server sends a lone read at once, so batching adds no latency when
/// there is nothing to share; under load a read waits at most for the batch ahead of it. One batch
/// in flight (the default) measured the least CPU per read: each batch is as large as it can be.
///
/// A read never joins a batch that was already sent, so it always observes every write that was
/// acknowledged before it arrived: a session revoked through another node is refused at once.
///
/// Where the work runs matters as much as how much of it there is (see docs/PERFORMANCE.md):
/// - The batches are sent from one task, on ``executor`` when there is one (the store's PostgreSQL
///   event loop), so a batch's answer is picked up at once rather than after the request work
///   queued on a busy HTTP event loop.
/// - Each reader is resumed on the event loop it called from. With SwiftNIO's loops as Swift's
///   global executor (as `tessera serve` runs), a continuation resumed on a loop continues there,
///   and the loop that owns a request's connection is where its response is written; the readers
///   of each loop are handed over in one `execute`, not one wake-up each.
/// - The fetch runs inline in the batch's task. When ``ReadBatchExpiry`` is given and a fetch outlives its
///   timeout (a connection that died without a word), its readers get the expiry's error, the
///   stuck task is left to finish alone, and the reads queued behind it go out in a new task.
final class PostgresReadBatcher<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Reads the values of some keys; keys without a value are simply absent from the answer.
    typealias Fetch = @Sendable ([Key]) async throws -> [Key: Value]

    private struct Waiter {
        let key: Key
        /// The event loop the reader ran on, if any.
        let loop: (any EventLoop)?
        let continuation: CheckedContinuation<Value?, any Error>
    }

    /// The readers of one sent batch, answered exactly once: by the fetch, or by the watchdog.
    private final class Batch: Sendable {
        private let waiters: Mutex<[Waiter]?>

        init(_ waiters: [Waiter]) { self.waiters = Mutex(waiters) }

        /// The readers, to the first caller only.
        func take() -> [Waiter]? {
            waiters.withLock { waiters in
                defer { waiters = nil }
                return waiters
            }
        }
    }

    private struct State {
        var waiting: [Waiter] = []
        var inFlight = 0
    }

    private let state = Mutex(State())
    private let fetch: Fetch
    private let executor: (any TaskExecutor)?
    private let expiry: ReadBatchExpiry?
    /// The most batches out at once.
    let maximumInFlight: Int
    /// The most keys in one batch.
    let maximumBatch: Int

    /// - Parameters:
    ///   - executor: where the batches' task runs; `nil` for the global executor.
    ///   - expiry: the deadline of a batch; `nil` waits for the fetch however long it takes.
    ///   - fetch: reads one batch.
    init(
        maximumInFlight: Int = 1, maximumBatch: Int = 256, executor: (any TaskExecutor)? = nil,
        expiry: ReadBatchExpiry? = nil,
        fetch: @escaping Fetch
    ) {
        precondition(maximumInFlight > 0 && maximumBatch > 0)
        self.maximumInFlight = maximumInFlight
        self.maximumBatch = maximumBatch
        self.executor = executor
        self.expiry = expiry
        self.fetch = fetch
    }

    /// The value for `key`, read in a batch that was sent after this call began.
    func load(_ key: Key) async throws -> Value? {
        try await withCheckedThrowingContinuation { continuation in
            let waiter = Waiter(
                key: key, loop: MultiThreadedEventLoopGroup.currentEventLoop, continuation: continuation)
            let batch = state.withLock { state -> [Waiter]? in
                state.waiting.append(waiter)
                guard state.inFlight < maximumInFlight else { return nil }
                state.inFlight += 1
                return Self.take(&state, maximumBatch)
            }
            if let batch { send(batch) }
        }
    }

    private static func take(_ state: inout State, _ maximum: Int) -> [Waiter] {
        guard state.waiting.count > maximum else {
            defer { state.waiting.removeAll(keepingCapacity: true) }
            return state.waiting
        }
        let batch = Array(state.waiting.prefix(maximum))
        state.waiting.removeFirst(maximum)
        return batch
    }

    /// The batch that takes over the slot of one that ended, or `nil` (and the slot is free).
    private func next() -> [Waiter]? {
        state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.inFlight -= 1
                return nil
            }
            return Self.take(&state, maximumBatch)
        }
    }

    /// Sends `waiters` as a batch, then, in the same task, every batch that queued up behind it.
    private func send(_ waiters: [Waiter]) {
        Task(executorPreference: executor) { [self] in
            var waiters = waiters
            while true {
                var keys: [Key] = []
                keys.reserveCapacity(waiters.count)
                var seen = Set<Key>(minimumCapacity: waiters.count)
                for waiter in waiters where seen.insert(waiter.key).inserted { keys.append(waiter.key) }
                let batch = Batch(waiters)
                let registration = expiry.map { expiry in
                    expiry.watchdog.register(deadline: .now + expiry.timeout) { [self] in
                        guard let waiters = batch.take() else { return }
                        Self.resume(waiters, with: .failure(expiry.error()))
                        if let queued = next() { send(queued) }
                    }
                }
                let result: Result<[Key: Value], any Error>
                do { result = .success(try await fetch(keys)) } catch { result = .failure(error) }
                if let expiry, let registration { expiry.watchdog.finish(registration) }
                // Taken already: the batch expired and its slot went on without this task.
                guard let answered = batch.take() else { return }
                Self.resume(answered, with: result)
                guard let queued = next() else { return }
                waiters = queued
            }
        }
    }

    /// Resumes each waiter with its value (or the batch's error) on the event loop it came from.
    private static func resume(_ waiters: [Waiter], with result: Result<[Key: Value], any Error>) {
        var handedOver: [(loop: any EventLoop, waiters: [Waiter])] = []
        for waiter in waiters {
            guard let loop = waiter.loop, !loop.inEventLoop else {
                resume(waiter, with: result)
                continue
            }
            if let index = handedOver.firstIndex(where: { $0.loop === loop }) {
                handedOver[index].waiters.append(waiter)
            } else {
                handedOver.append((loop, [waiter]))
            }
        }
        for (loop, waiters) in handedOver {
            loop.execute { for waiter in waiters { resume(waiter, with: result) } }
        }
    }

    private static func resume(_ waiter: Waiter, with result: Result<[Key: Value], any Error>) {
        waiter.continuation.resume(with: result.map { $0[waiter.key] })
    }
}

/// How long a batch of ``PostgresReadBatcher`` may take, and what its readers get when it takes longer.
struct ReadBatchExpiry: Sendable {
    var watchdog: OperationWatchdog
    var timeout: Duration
    /// Called once per expired batch (to log it); its error goes to every reader of the batch.
    var error: @Sendable () -> any Error
}

/// Runs jobs on one event loop: a task with this executor preference runs its nonisolated code
/// there, so a continuation that a channel of that loop resumes continues on the same thread.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
