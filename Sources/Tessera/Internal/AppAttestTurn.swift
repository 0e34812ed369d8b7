/// One request with App Attest evidence at a time, first come first served.
///
/// The server accepts an assertion only if its counter exceeds the last one it accepted, on every node,
/// and the device raises the counter at each assertion. Two requests whose assertions were made one
/// after the other but arrive in the other order would see the later one refused (`counter`). So the
/// SDK makes an assertion and sends its request inside one turn, and the next request's assertion is
/// made only once the server has answered the previous one. Attestations take the same turn: a key
/// attested by one request is the key the next request asserts with.
final class AppAttestTurn: Sendable {
    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Runs `body` once every earlier turn has ended; `waiting` is called first when one has not.
    func run<Value: Sendable>(
        isolation: isolated (any Actor)? = #isolation, waiting: @Sendable () -> Void,
        _ body: () async throws(TesseraError) -> Value
    ) async throws(TesseraError) -> Value {
        await acquire(waiting: waiting)
        defer { release() }
        return try await body()
    }

    private func acquire(waiting: @Sendable () -> Void) async {
        let free = state.withLock { state -> Bool in
            guard state.busy else {
                state.busy = true
                return true
            }
            return false
        }
        if free { return }
        waiting()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                // The turn may have ended between the check above and here.
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the turn to the longest waiter (it stays busy), or frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
