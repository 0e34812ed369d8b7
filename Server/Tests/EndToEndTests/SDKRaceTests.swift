import Foundation
import Testing

/// Randomized interleavings of the SDK's operations on one client, against a live server: a seeded
/// scheduler over a gated transport decides when each operation starts and in which order every
/// request reaches the server and every answer reaches the SDK (see ``RaceRun``). The app's extension
/// (a second client on the same store) launches and checks its session at seeded moments, and the
/// device clock jumps (40 days ahead, 3 years either way): after each run no identity is forked between
/// the two clients and no live session was ended on the device clock's word.
///
/// `TESSERA_RACE_RUNS` sets the number of runs (default 1000); `TESSERA_RACE_SEED` replays one seed
/// and prints its trace.
@Suite("SDK races against a live server")
struct SDKRaceTests {
    static let environment = ProcessInfo.processInfo.environment
    static let runs = environment["TESSERA_RACE_RUNS"].flatMap { Int($0) } ?? 1_000
    static let replay = environment["TESSERA_RACE_SEED"].flatMap { UInt64(seedText: $0) }
    /// Milliseconds of quiet before each scheduling decision (a replay may want more on a busy machine).
    static let quietWindow = Duration.milliseconds(
        environment["TESSERA_RACE_QUIET_MS"].flatMap { Int($0) } ?? (replay == nil ? 0 : 5))
    /// Runs in flight at once (each has its own client, store and scheduler; users are per seed).
    static let lanes = 4

    /// The seed of run `index`: fixed, so CI runs the same interleavings every time.
    static func seed(_ index: Int) -> UInt64 {
        var generator = SplitMix64(seed: 0x7E55_E7A0_0000_0000 &+ UInt64(index))
        return generator.next()
    }

    struct Failure: Sendable {
        var seed: UInt64
        var problems: [String]
        var trace: [String]
    }

    /// Problems with their identifiers blanked, counted, most frequent first.
    static func categories(_ problems: [String]) -> [(String, Int)] {
        var counts: [String: Int] = [:]
        for problem in problems {
            let category = problem.replacingOccurrences(
                of: #"(usr|ses|dev|st)_[A-Za-z0-9_-]+|r[0-9a-z]+-[abc]|push-[0-9a-z]+-[12]|#[0-9]+"#, with: "…",
                options: .regularExpression)
            counts[category, default: 0] += 1
        }
        return counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
    }

    @Test(
        "Seeded interleavings of start, identify, sign-out, reset, hydration, clearSession, heartbeat, devices and authenticate"
    )
    func randomizedInterleavings() async throws {
        let seeds = Self.replay.map { [$0] } ?? (0..<Self.runs).map(Self.seed)
        let failures = Guarded<[Failure]>([])
        let started = ContinuousClock.now
        try await LiveServer.run { server in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<Self.lanes {
                    group.addTask {
                        for index in stride(from: lane, to: seeds.count, by: Self.lanes) {
                            var run = RaceRun(seed: seeds[index], server: server)
                            run.quietWindow = Self.quietWindow
                            let (problems, trace) = try await run.execute()
                            if Self.replay != nil {
                                print("seed \(seeds[index].seedText) trace:\n  " + trace.joined(separator: "\n  "))
                            }
                            if !problems.isEmpty {
                                failures.withLock {
                                    $0.append(Failure(seed: seeds[index], problems: problems, trace: trace))
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let elapsed = ContinuousClock.now - started
        let found = failures.withLock { $0 }
        print("SDK races: \(seeds.count) runs, \(found.count) failed, \(elapsed)")
        for (category, count) in Self.categories(found.flatMap(\.problems)) {
            print("  \(count)× \(category)")
        }
        let failing = found
        for failure in failing.prefix(5) {
            Issue.record(
                """
                seed \(failure.seed.seedText) (replay: TESSERA_RACE_SEED=\(failure.seed.seedText)):
                  \(failure.problems.joined(separator: "\n  "))
                trace:
                  \(failure.trace.joined(separator: "\n  "))
                """)
        }
        if failing.count > 5 {
            Issue.record("… and \(failing.count - 5) more failed seeds: \(failing.dropFirst(5).map(\.seed.seedText))")
        }
    }
}
