import Foundation

@inline(never)
func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// Median nanoseconds per call of each body, measured in interleaved rounds so that load from
/// other processes falls on every body alike.
func measureInterleaved(rounds: Int = 31, iterations: Int, _ bodies: [() -> Void]) -> [Double] {
    for body in bodies { for _ in 0..<iterations { body() } }  // warm-up
    var samples = Array(repeating: [Double](), count: bodies.count)
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        for (index, body) in bodies.enumerated() {
            let elapsed = clock.measure {
                for _ in 0..<iterations { body() }
            }
            let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
            samples[index].append(nanoseconds / Double(iterations))
        }
    }
    return samples.map { $0.sorted()[$0.count / 2] }
}

func format(_ nanoseconds: Double) -> String { String(format: "%8.2f µs", nanoseconds / 1000) }
