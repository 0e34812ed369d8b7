import Foundation
import Synchronization
import Tessera

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A seeded scheduler over a gated transport: every request the SDK sends, and every response it
/// receives, waits parked until the scheduler releases it, and the scheduler picks the next step to
/// release with its seeded generator.
///
/// The run is reproducible from the seed as far as the SDK's own progress between two decisions is:
/// before each decision ``settle(barrier:)`` waits until every released request has come back from
/// the server (counted exactly) and the SDK's code has stopped producing events (a hop through the
/// client's actor and a few yields, repeated until nothing moves).
final class RaceScheduler: Sendable {
    /// A parked request or response.
    private struct Parked {
        var order: Int
        var label: String
        var isRequest: Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var random: SplitMix64
        var parked: [Parked] = []
        var nextOrder = 0
        /// Requests released and not yet parked again with their response.
        var inFlight = 0
        var inFlightWaiter: CheckedContinuation<Void, Never>?
        /// Bumped by every park, every release and every ``noteEvent()``.
        var events = 0
        var trace: [String] = []
        var sessionTokens: [String] = []
        var profileIDs: [String] = []
    }

    private let state: Mutex<State>

    /// - Parameter seed: The seed of the scheduler's choices.
    init(seed: UInt64) {
        state = Mutex(State(random: SplitMix64(seed: seed)))
    }

    // MARK: The gate

    /// Wraps a transport: each request waits for its release, then goes to the server; its response
    /// waits for its own release before the SDK sees it.
    func gate(_ real: @escaping TesseraConfiguration.Transport) -> TesseraConfiguration.Transport {
        { [self] request in
            let label = "\(request.httpMethod ?? "GET") \(request.url?.path ?? "?")"
            await park("→ \(label)", isRequest: true, endingFlight: false)
            let result: Result<(Data, URLResponse), any Error>
            do {
                result = .success(try await real(request))
            } catch {
                result = .failure(error)
            }
            let status = ((try? result.get())?.1 as? HTTPURLResponse)?.statusCode ?? 0
            if case .success(let (data, _)) = result, (200..<300).contains(status) { record(data) }
            await park("← \(label) \(status)", isRequest: false, endingFlight: true)
            return try result.get()
        }
    }

    private func park(_ label: String, isRequest: Bool, endingFlight: Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.parked.append(
                    Parked(order: state.nextOrder, label: label, isRequest: isRequest, continuation: continuation))
                state.nextOrder += 1
                state.events += 1
                guard endingFlight else { return nil }
                state.inFlight -= 1
                guard state.inFlight == 0 else { return nil }
                defer { state.inFlightWaiter = nil }
                return state.inFlightWaiter
            }
            waiter?.resume()
        }
    }

    /// Remembers the session tokens and profile IDs the server handed out, including answers the SDK drops.
    private func record(_ data: Data) {
        guard let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return }
        let token = json["session_token"] as? String
        let profileID = (json["profile"] as? [String: Any])?["id"] as? String
        state.withLock { state in
            if let token, !state.sessionTokens.contains(token) { state.sessionTokens.append(token) }
            if let profileID, !state.profileIDs.contains(profileID) { state.profileIDs.append(profileID) }
        }
    }

    /// Remembers a session handed out outside the gate (by the app's backend), so the checks cover it too.
    func noteSession(token: String, profileID: String?) {
        state.withLock { state in
            if !state.sessionTokens.contains(token) { state.sessionTokens.append(token) }
            if let profileID, !state.profileIDs.contains(profileID) { state.profileIDs.append(profileID) }
        }
    }

    // MARK: Decisions

    /// What ``decide(extraChoices:)`` picked.
    enum Decision: Equatable {
        /// A parked step was released.
        case released(String)
        /// One of the caller's own choices (launch an operation, …), by index.
        case extra(Int)
        /// Nothing to choose from.
        case none
    }

    /// Picks uniformly among the parked steps and `extraChoices` choices of the caller, and releases the
    /// step when it picked one. Parked steps are ordered by label, then arrival, so the order in
    /// which simultaneous steps arrived matters as little as possible.
    func decide(extraChoices: Int) -> Decision {
        let (decision, continuation) = state.withLock { state -> (Decision, CheckedContinuation<Void, Never>?) in
            let total = state.parked.count + extraChoices
            guard total > 0 else { return (.none, nil) }
            state.parked.sort { ($0.label, $0.order) < ($1.label, $1.order) }
            let pick = state.random.index(total)
            state.events += 1
            guard pick < state.parked.count else {
                state.trace.append("op #\(pick - state.parked.count)")
                return (.extra(pick - state.parked.count), nil)
            }
            let step = state.parked.remove(at: pick)
            if step.isRequest { state.inFlight += 1 }
            state.trace.append(step.label)
            return (.released(step.label), step.continuation)
        }
        continuation?.resume()
        return decision
    }

    /// Runs `body` (a call outside the SDK, such as an admin request) counted as a request in flight, so
    /// ``settle(barrier:)`` waits for it.
    func outside<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        state.withLock { state in
            state.inFlight += 1
            state.events += 1
        }
        defer {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.inFlight -= 1
                state.events += 1
                guard state.inFlight == 0 else { return nil }
                defer { state.inFlightWaiter = nil }
                return state.inFlightWaiter
            }
            waiter?.resume()
        }
        return try await body()
    }

    /// Records that something happened outside the gate (an operation finished), for ``settle(barrier:)``.
    func noteEvent(_ text: String? = nil) {
        state.withLock { state in
            state.events += 1
            if let text { state.trace.append(text) }
        }
    }

    /// Waits until every released request is back (parked with its response), then until the SDK has
    /// stopped producing events: `barrier` (a hop through the client's actor) and a few yields, twice in
    /// a row without any new event, then a quiet window of real time without any (the SDK's own steps
    /// between two parks are not observable; on a loaded machine the yields alone can end before
    /// another thread has run them). The window costs time, not correctness: it only makes a seed's
    /// replay follow the same path.
    func settle(quietWindow: Duration, barrier: @Sendable () async -> Void) async {
        while true {
            var quiet = 0
            while quiet < 2 {
                await waitForInFlight()
                let before = state.withLock { $0.events }
                await barrier()
                for _ in 0..<6 { await Task.yield() }
                let (after, inFlight) = state.withLock { ($0.events, $0.inFlight) }
                quiet = after == before && inFlight == 0 ? quiet + 1 : 0
            }
            guard quietWindow > .zero else { return }
            let before = state.withLock { $0.events }
            try? await Task.sleep(for: quietWindow)
            if state.withLock({ $0.events == before && $0.inFlight == 0 }) { return }
        }
    }

    private func waitForInFlight() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.inFlight == 0 { return true }
                state.inFlightWaiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    // MARK: Reading

    var parkedCount: Int { state.withLock { $0.parked.count } }
    var trace: [String] { state.withLock { $0.trace } }
    /// Every session token the server handed out in this run, in order.
    var sessionTokens: [String] { state.withLock { $0.sessionTokens } }
    /// Every profile ID the server answered with in this run, in order.
    var profileIDs: [String] { state.withLock { $0.profileIDs } }
}

/// A value shared between tasks behind a mutex (a class, so closures can capture it).
final class Guarded<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}
