import Synchronization

/// What a node is doing right now: the requests and webhook deliveries in flight, and whether it
/// is draining before it stops.
///
/// The middleware counts requests, the webhook dispatcher its deliveries; `GET /health/ready`
/// answers not ready from the moment the drain starts, and the drain's log lines report the counts.
final class NodeActivity: Sendable {
    private let requests = Atomic<Int>(0)
    private let deliveries = Atomic<Int>(0)
    private let draining = Atomic<Bool>(false)
    private let drainStart = Mutex<(at: ContinuousClock.Instant, requests: Int, deliveries: Int)?>(nil)

    init() {}

    /// Whether the node is draining: it still serves, but a load balancer should stop sending to it.
    var isDraining: Bool { draining.load(ordering: .acquiring) }
    /// The requests being answered.
    var requestsInFlight: Int { requests.load(ordering: .relaxed) }
    /// The webhook deliveries being sent or recorded.
    var deliveriesInFlight: Int { deliveries.load(ordering: .relaxed) }

    /// When the drain started, and what was in flight then; nil before it starts.
    var drainStarted: (at: ContinuousClock.Instant, requests: Int, deliveries: Int)? { drainStart.withLock { $0 } }

    /// Starts the drain; true the first time.
    @discardableResult
    func startDraining() -> Bool {
        let first = !draining.exchange(true, ordering: .acquiringAndReleasing)
        if first {
            let state = (at: ContinuousClock.now, requests: requestsInFlight, deliveries: deliveriesInFlight)
            drainStart.withLock { $0 = state }
        }
        return first
    }

    func requestStarted() { requests.add(1, ordering: .relaxed) }
    func requestFinished() { requests.subtract(1, ordering: .relaxed) }
    func deliveriesStarted(_ count: Int) { deliveries.add(count, ordering: .relaxed) }
    func deliveriesFinished(_ count: Int) { deliveries.subtract(count, ordering: .relaxed) }
}
