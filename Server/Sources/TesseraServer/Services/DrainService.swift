import Logging
import ServiceLifecycle

/// The first step of a node's graceful shutdown: `GET /health/ready` answers 503 at once, the node
/// keeps serving for ``delay`` so that load balancers see it not ready and stop sending to it, then
/// the shutdown goes on (the listener closes, the requests and webhook deliveries in flight finish).
///
/// ``TesseraNode`` runs it after the application, so a service group shuts it down first.
struct DrainService: Service {
    let activity: NodeActivity
    /// How long the node keeps its listener open once it answers not ready.
    let delay: Duration
    let logger: Logger
    /// Waits `delay` (tests hold the drain open until they let it go).
    var wait: @Sendable (Duration) async -> Void = { delay in try? await Task.sleep(for: delay) }

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled (the application stopped on its own): nothing to drain.
            return
        }
        activity.startDraining()
        logger.notice(
            "draining: /health/ready answers 503; the listener stays open before the shutdown",
            metadata: [
                "drain_seconds": "\(delay.components.seconds)",
                "requests_in_flight": "\(activity.requestsInFlight)",
                "deliveries_in_flight": "\(activity.deliveriesInFlight)",
            ])
        await wait(delay)
        logger.notice(
            "drain delay over: closing the listener; the requests and deliveries in flight finish first",
            metadata: [
                "requests_in_flight": "\(activity.requestsInFlight)",
                "deliveries_in_flight": "\(activity.deliveriesInFlight)",
            ])
    }
}
