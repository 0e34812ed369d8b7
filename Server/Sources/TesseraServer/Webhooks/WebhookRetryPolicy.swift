/// The contract's retry schedule: after a failed attempt, the next one about 5 s, 5 min, 30 min,
/// 2 h, 5 h, 10 h and 10 h later (each with up to ±10 % jitter), then the delivery is failed; a
/// `410` fails it at once and disables the endpoint; an endpoint whose attempts all failed for 5
/// days is disabled.
public struct WebhookRetryPolicy: Sendable {
    /// The delays, in seconds, after the first, second, … failed attempt.
    public static let delays: [Int64] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]
    /// How long an endpoint may fail every attempt before it is disabled.
    public static let failingSeconds: Int64 = 5 * 86_400

    /// The jitter added to a delay (tests inject a fixed one); by default up to ±10 % of it.
    public var jitter: @Sendable (Int64) -> Int64

    public init(jitter: @escaping @Sendable (Int64) -> Int64 = WebhookRetryPolicy.randomJitter) {
        self.jitter = jitter
    }

    /// Up to ±10 % of `delay`.
    public static func randomJitter(_ delay: Int64) -> Int64 {
        let spread = delay / 10
        return spread == 0 ? 0 : Int64.random(in: -spread...spread)
    }

    /// The result to record for attempt number `attempt` (1 for the first) of `delivery` at `now`.
    public func result(
        of outcome: WebhookOutcome, attempt: Int, delivery: ClaimedWebhookDelivery, now: Int64
    ) -> WebhookAttemptResult {
        var result = WebhookAttemptResult(
            webhookID: delivery.webhookID, eventID: delivery.eventID, lease: delivery.lease, attempt: attempt,
            at: now, statusCode: outcome.statusCode, error: outcome.error?.rawValue,
            durationMilliseconds: outcome.durationMilliseconds, state: .failed, nextAttemptAt: nil,
            disableReason: nil, failingDisableBefore: now - Self.failingSeconds)
        switch outcome.kind {
        case .delivered:
            result.state = .delivered
        case .gone:
            result.disableReason = "gone"
        case .failed:
            if attempt <= Self.delays.count {
                let delay = Self.delays[attempt - 1]
                result.state = .pending
                result.nextAttemptAt = now + max(1, delay + jitter(delay))
            }
        }
        return result
    }
}
