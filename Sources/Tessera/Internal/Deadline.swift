import Foundation

/// Runs an operation against a deadline on a ``TesseraClock``: whichever comes first, the answer or the
/// deadline, decides. At the deadline the operation is cancelled but not awaited, so one that ignores
/// cancellation cannot hold the caller.
enum Deadline {
    private struct State<Value> {
        var continuation: CheckedContinuation<Value, any Error>?
        var result: Result<Value, any Error>?
        var tasks: [Task<Void, Never>] = []
    }

    static func run<Value: Sendable>(
        _ timeout: Duration, clock: any TesseraClock, timeoutError: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let state = Locked(State<Value>())
        /// The first result wins: it resumes the caller and cancels both racers.
        let finish: @Sendable (Result<Value, any Error>) -> Void = { result in
            let (continuation, tasks) = state.withLock {
                state -> (CheckedContinuation<Value, any Error>?, [Task<Void, Never>]) in
                guard state.result == nil else { return (nil, []) }
                state.result = result
                defer {
                    state.continuation = nil
                    state.tasks = []
                }
                return (state.continuation, state.tasks)
            }
            for task in tasks { task.cancel() }
            continuation?.resume(with: result)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let finished = state.withLock { state -> Result<Value, any Error>? in
                    if state.result == nil { state.continuation = continuation }
                    return state.result
                }
                if let finished { return continuation.resume(with: finished) }
                let work = Task {
                    do {
                        finish(.success(try await operation()))
                    } catch {
                        finish(.failure(error))
                    }
                }
                let timer = Task {
                    do {
                        try await clock.sleep(for: timeout)
                    } catch {
                        return
                    }
                    finish(.failure(timeoutError()))
                }
                let done = state.withLock { state -> Bool in
                    if state.result == nil { state.tasks = [work, timer] }
                    return state.result != nil
                }
                if done {
                    work.cancel()
                    timer.cancel()
                }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }
}
