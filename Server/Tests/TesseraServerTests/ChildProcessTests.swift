import Foundation
import TesseraTestProcess
import Testing

@Suite("Child processes the tests run")
struct ChildProcessTests {
    /// More children than the concurrency pool has threads, each waiting until every one of them has
    /// started. A `run` that waited on a pool thread would start only as many children as the pool has
    /// threads at once: those would never see the others and would give up after 20 s, exiting 1.
    @Test("ChildProcess.run waits on a thread of its own: more children than cores run at once")
    func runKeepsThePoolFree() async throws {
        let directory = try newTemporaryDirectory("children")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let count = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        // Each child marks that it started, then waits (polling the directory, at most 400 × 50 ms)
        // until all `count` have; it exits 0 if they all did.
        let script = """
            touch "$1/started-$2"
            i=0
            while [ "$(ls "$1" | wc -l)" -lt \(count) ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
            [ "$(ls "$1" | wc -l)" -ge \(count) ]
            """
        let terminations = try await withThrowingTaskGroup(of: ChildProcess.Termination.self) { group in
            for index in 0..<count {
                group.addTask {
                    try await ChildProcess.run("/bin/sh", ["-c", script, "sh", directory, String(index)]).termination
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(terminations == Array(repeating: .exited(0), count: count))
    }
}
