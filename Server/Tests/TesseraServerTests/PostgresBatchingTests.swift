import NIOPosix
import Synchronization
import Testing

@testable import TesseraServer

/// A fetch that records every batch it is given and answers only when the test releases it.
private final class GatedFetch: Sendable {
    private struct State {
        var batches: [[String]] = []
        var gates: [CheckedContinuation<Void, Never>] = []
        var failing = false
    }

    private let state = Mutex(State())

    var batches: [[String]] { state.withLock { $0.batches } }

    func fail() { state.withLock { $0.failing = true } }

    /// Answers every key `k` with `"value of k"`, except keys starting with `missing`.
    func fetch(_ keys: [String]) async throws -> [String: String] {
        await withCheckedContinuation { gate in
            state.withLock {
                $0.batches.append(keys)
                $0.gates.append(gate)
            }
        }
        if state.withLock({ $0.failing }) { throw CoreError.sessionNotFound }
        var values: [String: String] = [:]
        for key in keys where !key.hasPrefix("missing") { values[key] = "value of \(key)" }
        return values
    }

    /// Lets the oldest waiting batch answer.
    func releaseOne() {
        let gate = state.withLock { $0.gates.isEmpty ? nil : $0.gates.removeFirst() }
        gate?.resume()
    }

    /// Waits until `count` batches were sent.
    func waitForBatches(_ count: Int) async throws {
        for _ in 0..<2_000 {
            if state.withLock({ $0.batches.count }) >= count { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("only \(batches.count) of \(count) batches were sent")
    }
}

@Suite("PostgreSQL read batching and operation deadlines")
struct PostgresBatchingTests {
    @Test("A lone read goes out at once; reads that arrive meanwhile share the next batch")
    func coalesces() async throws {
        let gate = GatedFetch()
        let batcher = PostgresReadBatcher<String, String> { try await gate.fetch($0) }
        try await withThrowingTaskGroup(of: (String, String?).self) { group in
            group.addTask { ("first", try await batcher.load("first")) }
            try await gate.waitForBatches(1)
            // These arrive while the first batch is out: they must not join it.
            for key in ["a", "b", "a", "missing-c"] {
                group.addTask { (key, try await batcher.load(key)) }
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(gate.batches == [["first"]])
            gate.releaseOne()
            try await gate.waitForBatches(2)
            gate.releaseOne()
            var answers: [String: [String?]] = [:]
            for try await (key, value) in group { answers[key, default: []].append(value) }
            #expect(answers["first"] == ["value of first"])
            #expect(answers["a"] == ["value of a", "value of a"])
            #expect(answers["b"] == ["value of b"])
            #expect(answers["missing-c"] == [nil])
        }
        // One batch for the lone read, one for everything that queued behind it, each key once.
        #expect(gate.batches.count == 2)
        #expect(gate.batches.last.map { Set($0) } == ["a", "b", "missing-c"])
        #expect(gate.batches.last?.count == 3)
    }

    @Test("A batch never exceeds its maximum size, and a failure reaches every read of its batch")
    func limitsAndFailures() async throws {
        let gate = GatedFetch()
        let batcher = PostgresReadBatcher<String, String>(maximumInFlight: 1, maximumBatch: 2) {
            try await gate.fetch($0)
        }
        gate.fail()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await batcher.load("k0")) == nil }
            try await gate.waitForBatches(1)
            for index in 1...5 {
                group.addTask { (try? await batcher.load("k\(index)")) == nil }
            }
            try await Task.sleep(for: .milliseconds(50))
            for batch in 1...4 {
                gate.releaseOne()
                if batch < 4 { try await gate.waitForBatches(batch + 1) }
            }
            var failed = 0
            for try await refused in group where refused { failed += 1 }
            #expect(failed == 6)
        }
        #expect(gate.batches.map(\.count) == [1, 2, 2, 1])
    }

    @Test("Several batches may be out at once, up to the limit")
    func inFlightLimit() async throws {
        let gate = GatedFetch()
        let batcher = PostgresReadBatcher<String, String>(maximumInFlight: 2) { try await gate.fetch($0) }
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { try await batcher.load("one") }
            try await gate.waitForBatches(1)
            group.addTask { try await batcher.load("two") }
            try await gate.waitForBatches(2)
            group.addTask { try await batcher.load("three") }
            try await Task.sleep(for: .milliseconds(50))
            #expect(gate.batches.count == 2)
            gate.releaseOne()
            try await gate.waitForBatches(3)
            gate.releaseOne()
            gate.releaseOne()
            var values: Set<String> = []
            for try await value in group { values.insert(try #require(value)) }
            #expect(values == ["value of one", "value of two", "value of three"])
        }
    }

    @Test("A batch that outlives its timeout answers its reads with the expiry's error; later reads go out without it")
    func expiry() async throws {
        // Swept by the test itself, not by `run()`: a batch expires exactly when the test says (on a
        // busy machine the batch that follows could otherwise outlive a short timeout too).
        let watchdog = OperationWatchdog()
        let gate = GatedFetch()
        let expired = Mutex(0)
        let batcher = PostgresReadBatcher<String, String>(
            expiry: .init(watchdog: watchdog, timeout: .milliseconds(100)) {
                expired.withLock { $0 += 1 }
                return PostgresStore.unavailable
            }
        ) { try await gate.fetch($0) }

        // The first batch never answers (a connection that died without a word).
        let stuck = Task { try await batcher.load("stuck") }
        try await gate.waitForBatches(1)
        let queued = Task { try await batcher.load("queued") }
        #expect(watchdog.sweep(now: .now + .seconds(1)) == 1)
        await #expect(throws: CoreError.self) { try await stuck.value }
        #expect(expired.withLock { $0 } == 1)
        // The read that queued behind the stuck batch went out in a batch of its own.
        try await gate.waitForBatches(2)
        #expect(gate.batches == [["stuck"], ["queued"]])
        gate.releaseOne()  // the stuck fetch finally answers: its readers were answered already
        gate.releaseOne()
        #expect(try await queued.value == "value of queued")
        // Nothing is left registered, and a later read goes out and answers normally.
        #expect(watchdog.pending == 0)
        let later = Task { try await batcher.load("later") }
        try await gate.waitForBatches(3)
        gate.releaseOne()
        #expect(try await later.value == "value of later")
        #expect(expired.withLock { $0 } == 1)
    }

    @Test("Readers on event loops are answered on their own loops, from a batch read on another")
    func readersOnEventLoops() async throws {
        let readers = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let reading = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let gate = GatedFetch()
        let batcher = PostgresReadBatcher<String, String>(executor: EventLoopTaskExecutor(reading.next())) {
            keys in
            #expect(MultiThreadedEventLoopGroup.currentEventLoop === reading.next())
            return try await gate.fetch(keys)
        }
        let loops = [readers.next(), readers.next()]
        try await withThrowingTaskGroup(of: (String?, Bool).self) { group in
            for index in 0..<8 {
                let loop = loops[index % 2]
                group.addTask(executorPreference: EventLoopTaskExecutor(loop)) {
                    let value = try await batcher.load("key \(index)")
                    return (value, loop.inEventLoop)
                }
            }
            // Release batches one by one until every key was in a released one.
            var released = 0
            while gate.batches.prefix(released).joined().count < 8 {
                try await gate.waitForBatches(released + 1)
                gate.releaseOne()
                released += 1
            }
            var answered = 0
            for try await (value, onItsLoop) in group {
                #expect(value?.hasPrefix("value of key ") == true)
                #expect(onItsLoop)
                answered += 1
            }
            #expect(answered == 8)
        }
        try await readers.shutdownGracefully()
        try await reading.shutdownGracefully()
    }

    @Test("The watchdog expires only what is overdue, once, and never what finished")
    func watchdog() async throws {
        let watchdog = OperationWatchdog(resolution: .milliseconds(10))
        let expired = Mutex<[String]>([])
        let start = ContinuousClock.now
        let late = watchdog.register(deadline: start + .milliseconds(20)) { expired.withLock { $0.append("late") } }
        let finished = watchdog.register(deadline: start + .milliseconds(20)) {
            expired.withLock { $0.append("finished") }
        }
        _ = watchdog.register(deadline: start + .seconds(3_600)) { expired.withLock { $0.append("later") } }
        watchdog.finish(finished)
        #expect(watchdog.sweep(now: start) == 0)
        #expect(watchdog.pending == 2)
        #expect(watchdog.sweep(now: start + .milliseconds(20)) == 1)
        #expect(expired.withLock { $0 } == ["late"])
        watchdog.finish(late)  // already expired: nothing happens
        #expect(watchdog.sweep(now: start + .seconds(60)) == 0)

        // run() sweeps on its own, and expires what is left when it is cancelled.
        let soon = watchdog.register(deadline: .now + .milliseconds(30)) { expired.withLock { $0.append("soon") } }
        _ = soon
        let runner = Task { await watchdog.run() }
        for _ in 0..<400 where !expired.withLock({ $0.contains("soon") }) {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(expired.withLock { $0 } == ["late", "soon"])
        runner.cancel()
        await runner.value
        #expect(expired.withLock { $0 } == ["late", "soon", "later"])
        #expect(watchdog.pending == 0)
    }
}
