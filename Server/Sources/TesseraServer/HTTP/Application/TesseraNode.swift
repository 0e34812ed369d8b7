import Foundation
import Hummingbird
import Logging
public import ServiceLifecycle

/// One Tessera server node: the application, and the drain that comes before its shutdown.
///
/// On a graceful shutdown (SIGTERM or SIGINT under ``runService()``) the
/// node first answers `GET /health/ready` with 503 and keeps serving for the configured
/// ``ServerConfiguration/drainDelay``, so that load balancers take it out of rotation; then it closes
/// its listener, finishes the requests and webhook deliveries in flight, closes the store, and logs
/// how long the drain took.
///
/// ```swift
/// let node = try await buildNode(configuration: configuration)
/// try await node.runService()
/// ```
public struct TesseraNode: Service {
    let application: Application<RouterResponder<TesseraRequestContext>>
    var drain: DrainService
    let activity: NodeActivity
    let logger: Logger

    /// Runs the node until a graceful shutdown has drained it (or the task is cancelled).
    public func run() async throws {
        // A service group shuts its services down in reverse: the drain first, then the application
        // (its listener, then the webhook dispatcher, the cleanup and the store).
        let group = ServiceGroup(configuration: .init(services: [application, drain], logger: logger))
        try await group.run()
        if let start = activity.drainStarted {
            let elapsed = start.at.duration(to: .now)
            logger.notice(
                "drained and stopped",
                metadata: [
                    "seconds": "\(Self.seconds(elapsed))",
                    "requests_in_flight_at_start": "\(start.requests)",
                    "deliveries_in_flight_at_start": "\(start.deliveries)",
                    "requests_in_flight": "\(activity.requestsInFlight)",
                    "deliveries_in_flight": "\(activity.deliveriesInFlight)",
                ])
        }
    }

    /// Runs the node in a service group that drains it on SIGTERM or SIGINT.
    public func runService() async throws {
        let group = ServiceGroup(
            configuration: .init(services: [self], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// A duration in seconds with millisecond precision, for the log.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return String(format: "%.3f", Double(milliseconds) / 1000)
    }
}
