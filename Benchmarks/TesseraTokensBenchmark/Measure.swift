import Foundation

@inline(never)
func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// Median nanoseconds of this thread's CPU time per call of each body, measured in interleaved
/// rounds so that load from other processes falls on every body alike. CPU time rather than the
/// wall clock: on a shared machine the time a body waits for a core is not its cost.
func measureInterleaved(rounds: Int = 31, iterations: Int, _ bodies: [() -> Void]) -> [Double] {
    for body in bodies { for _ in 0..<iterations { body() } }  // warm-up
    var samples = Array(repeating: [Double](), count: bodies.count)
    for _ in 0..<rounds {
        for (index, body) in bodies.enumerated() {
            let start = threadCPUNanoseconds()
            for _ in 0..<iterations { body() }
            samples[index].append(Double(threadCPUNanoseconds() - start) / Double(iterations))
        }
    }
    return samples.map { $0.sorted()[$0.count / 2] }
}

/// The CPU time this thread has used, in nanoseconds.
func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func format(_ nanoseconds: Double) -> String { String(format: "%8.2f µs", nanoseconds / 1000) }
