import Dispatch
import ServiceLifecycle

/// Runs a service, and the tasks it starts, on a dispatch queue of its own instead of the global
/// executor (NIO's event loops in `tessera serve`): swift-otel's exporters shut their HTTP client down
/// synchronously when they are released, which must not happen on an event loop.
struct OffLoopService: Service {
    let service: any Service

    init(_ service: any Service) { self.service = service }

    func run() async throws {
        try await withTaskExecutorPreference(OffLoopExecutor.shared) { try await service.run() }
    }
}

/// A task executor on one serial dispatch queue.
final class OffLoopExecutor: TaskExecutor {
    static let shared = OffLoopExecutor()
    private let queue = DispatchQueue(label: "tessera.otel")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
