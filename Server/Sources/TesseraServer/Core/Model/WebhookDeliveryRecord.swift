/// One event queued for one webhook endpoint, with its latest attempt: a row of the delivery log.
public struct WebhookDeliveryRecord: Sendable, Hashable {
    /// Where a delivery stands.
    public enum State: String, Sendable, CaseIterable {
        /// Waiting for its first attempt or for a retry.
        case pending
        /// A 2xx answer.
        case delivered
        /// No retry left, or the endpoint answered Gone.
        case failed
    }

    public var webhookID: String
    public var eventID: String
    public var eventType: String
    /// The event's sequence; nil for a test event.
    public var sequence: Int64?
    public var state: State
    /// How many attempts were made (0 before the first).
    public var attempt: Int
    /// The latest attempt's answer, when it had one.
    public var statusCode: Int?
    /// Why the latest attempt had no 2xx answer without a status code (`timeout`, `refused`, …).
    public var error: String?
    public var durationMilliseconds: Int64?
    /// When the latest attempt was made.
    public var attemptedAt: Int64?
    /// When the next attempt is due, while pending.
    public var nextAttemptAt: Int64?
    /// When the delivery was queued (or queued again by a replay): the log's order.
    public var queuedAt: Int64

    public init(
        webhookID: String, eventID: String, eventType: String, sequence: Int64?, state: State, attempt: Int,
        statusCode: Int?, error: String?, durationMilliseconds: Int64?, attemptedAt: Int64?, nextAttemptAt: Int64?,
        queuedAt: Int64
    ) {
        self.webhookID = webhookID
        self.eventID = eventID
        self.eventType = eventType
        self.sequence = sequence
        self.state = state
        self.attempt = attempt
        self.statusCode = statusCode
        self.error = error
        self.durationMilliseconds = durationMilliseconds
        self.attemptedAt = attemptedAt
        self.nextAttemptAt = nextAttemptAt
        self.queuedAt = queuedAt
    }
}

/// A page position in a webhook's delivery log (newest first): the last row's queue time and event ID.
public struct WebhookDeliveryCursor: Sendable, Hashable {
    public var queuedAt: Int64
    public var eventID: String

    public init(queuedAt: Int64, eventID: String) {
        self.queuedAt = queuedAt
        self.eventID = eventID
    }
}

/// A delivery a dispatcher claimed under a lease: no other dispatcher claims it until the lease expires.
public struct ClaimedWebhookDelivery: Sendable, Hashable {
    public var webhookID: String
    public var projectID: String
    public var eventID: String
    /// The attempts made before this one.
    public var attempt: Int
    /// The lease's token: recording the attempt succeeds only while the lease holds.
    public var lease: String
    /// The event as the feed shows it; nil for a test event, or an event retention already deleted.
    public var event: EventRecord?
    /// The body of a test event (nil otherwise).
    public var body: String?
    /// When the event was committed (for the delivery latency).
    public var eventCreatedAt: Int64
    /// The trace context of the request that produced the event (`traceparent`, and `tracestate` on a
    /// second line); nil when it was not traced.
    public var traceContext: String?

    public init(
        webhookID: String, projectID: String, eventID: String, attempt: Int, lease: String, event: EventRecord?,
        body: String?, eventCreatedAt: Int64, traceContext: String? = nil
    ) {
        self.traceContext = traceContext
        self.webhookID = webhookID
        self.projectID = projectID
        self.eventID = eventID
        self.attempt = attempt
        self.lease = lease
        self.event = event
        self.body = body
        self.eventCreatedAt = eventCreatedAt
    }
}

/// What one attempt of a claimed delivery came to, and what follows from it, as the store records it.
public struct WebhookAttemptResult: Sendable, Hashable {
    public var webhookID: String
    public var eventID: String
    /// The lease the attempt was made under.
    public var lease: String
    /// This attempt's number (1 for the first).
    public var attempt: Int
    public var at: Int64
    public var statusCode: Int?
    public var error: String?
    public var durationMilliseconds: Int64
    /// Where the delivery stands after the attempt.
    public var state: WebhookDeliveryRecord.State
    /// When to try again (only when `state` is pending).
    public var nextAttemptAt: Int64?
    /// Disable the endpoint with this reason (`gone`).
    public var disableReason: String?
    /// The endpoint is disabled (reason `failing`) when this attempt failed and every attempt since
    /// this time failed too.
    public var failingDisableBefore: Int64
    /// The request's body, kept with the attempt (nil: not kept).
    public var requestBody: String? = nil
    /// The first 4 KiB of the answer's body, when there was an answer.
    public var responseBody: [UInt8]? = nil

    public init(
        webhookID: String, eventID: String, lease: String, attempt: Int, at: Int64, statusCode: Int?,
        error: String?, durationMilliseconds: Int64, state: WebhookDeliveryRecord.State, nextAttemptAt: Int64?,
        disableReason: String?, failingDisableBefore: Int64
    ) {
        self.webhookID = webhookID
        self.eventID = eventID
        self.lease = lease
        self.attempt = attempt
        self.at = at
        self.statusCode = statusCode
        self.error = error
        self.durationMilliseconds = durationMilliseconds
        self.state = state
        self.nextAttemptAt = nextAttemptAt
        self.disableReason = disableReason
        self.failingDisableBefore = failingDisableBefore
    }
}

/// One attempt to deliver one event to one endpoint, as kept in the attempt log: a replay adds an
/// attempt, never replaces one.
public struct WebhookAttemptRecord: Sendable, Hashable {
    /// Time-ordered (`wat_…`).
    public var id: String
    public var webhookID: String
    public var eventID: String
    /// The attempt's number within its delivery (a replay starts again at 1).
    public var attempt: Int
    public var at: Int64
    public var statusCode: Int?
    public var error: String?
    public var durationMilliseconds: Int64
    public var requestBody: String?
    /// The first 4 KiB of the answer's body.
    public var responseBody: [UInt8]?

    public init(
        id: String, webhookID: String, eventID: String, attempt: Int, at: Int64, statusCode: Int?, error: String?,
        durationMilliseconds: Int64, requestBody: String?, responseBody: [UInt8]?
    ) {
        self.id = id
        self.webhookID = webhookID
        self.eventID = eventID
        self.attempt = attempt
        self.at = at
        self.statusCode = statusCode
        self.error = error
        self.durationMilliseconds = durationMilliseconds
        self.requestBody = requestBody
        self.responseBody = responseBody
    }

    /// Whether the attempt was answered 2xx.
    public var succeeded: Bool { statusCode.map { (200..<300).contains($0) } ?? false }
}
