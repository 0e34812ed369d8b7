import Testing

@testable import Tessera

@Suite("Single flight: one request per key, joined by concurrent callers")
struct SingleFlightTests {
    @Test("A caller joins the task under way for its key; another key starts its own")
    func joinsByKey() async throws {
        var flights = SingleFlight<Int, Int>()
        let none = flights.join(1)
        #expect(none == nil, "nothing under way: the caller starts the request")
        let task = Task<Int, any Error> { 42 }
        flights.begin(1, task)
        #expect(flights.isRunning(1))
        #expect(!flights.isRunning(2))
        let other = flights.join(2)
        #expect(other == nil, "another key does not join")
        let running = flights.join(1)
        let joined = try #require(running)
        #expect(try await joined.value == 42)
        #expect(flights.joins == 1, "only the join of a running task counts")
        #expect(!flights.isEmpty)
    }

    @Test("Once ended, a key starts a new request; ending another key leaves it running")
    func endForgetsOnlyItsKey() {
        var flights = SingleFlight<Int, Int>()
        flights.begin(1, Task { 1 })
        flights.begin(2, Task { 2 })
        flights.end(1)
        let ended = flights.join(1)
        let running = flights.join(2)
        #expect(ended == nil)
        #expect(running != nil)
        flights.end(2)
        #expect(flights.isEmpty)
        #expect(flights.joins == 1)
    }

    @Test("The client's work: joins of every flight are told to the observer, isWorking follows tasks and checks")
    func clientWork() {
        var work = ClientWork()
        let told = Locked<[Int]>([])
        work.onJoin = { total in told.withLock { $0.append(total) } }
        #expect(!work.isWorking)
        work.start.begin(ClientWork.StartKey(), Task {})
        #expect(!work.isWorking, "a flight alone is not counted: its task is")
        let start = work.join(\.start, ClientWork.StartKey())
        #expect(start != nil)
        work.establish.begin(7, Task { throw TesseraError(.cancelled) })
        let older = work.join(\.establish, 6)
        let current = work.join(\.establish, 7)
        #expect(older == nil, "an older generation's request is not joined")
        #expect(current != nil)
        #expect(told.withLock { $0 } == [1, 2])
        #expect(work.joins == 2)
        work.taskBegan()
        #expect(work.isWorking)
        work.taskEnded()
        #expect(!work.isWorking)
        let key = ClientWork.AuthenticateKey(generation: 1, durationMinutes: nil, sessionToken: "s")
        work.authenticate.begin(key, Task { throw TesseraError(.cancelled) })
        #expect(work.isWorking, "a session check is work until it was digested")
        work.authenticate.end(key)
        #expect(!work.isWorking)
    }
}
