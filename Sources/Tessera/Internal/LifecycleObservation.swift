import Foundation

/// An application lifecycle event, as the client handles it.
enum LifecycleEvent: Sendable, Hashable {
    /// The app went to the background: the heartbeat pauses.
    case didEnterBackground
    /// The app is coming to the foreground: the heartbeat resumes (and checks at once when due).
    case willEnterForeground
    /// Protected data (the keychain, protected files) became readable: a store that was unavailable is
    /// read again at once, instead of at the next backoff step.
    case protectedDataDidBecomeAvailable
    /// The app was launched in the background (a push, a background task, pre-warming): as
    /// `didEnterBackground`, until the app comes to the foreground.
    case launchedInBackground
}

/// One ordered stream of lifecycle events from a table of notifications, applied one at a time.
///
/// Each notification is turned into its event synchronously, on the thread that posts it, and queued;
/// one task applies the events in that order. (One task per notification, as before, could apply a
/// foreground before the background that preceded it.) The platform's table of notification names is
/// the only Apple-only part: see `TesseraClient+Lifecycle.swift`.
final class LifecycleObservation: Sendable {
    /// A notification that means an event.
    struct Source: Sendable {
        var center: NotificationCenter
        var name: Notification.Name
        var event: LifecycleEvent
    }

    private let continuation: AsyncStream<LifecycleEvent>.Continuation
    private let registrations: Locked<[(center: NotificationCenter, token: any NSObjectProtocol)]>

    /// Observes `sources`, queues `initial` first, and applies every event with `apply`, in order.
    init(
        sources: [Source], initial: [LifecycleEvent] = [],
        apply: @escaping @Sendable (LifecycleEvent) async -> Void
    ) {
        let (stream, continuation) = AsyncStream<LifecycleEvent>.makeStream(bufferingPolicy: .unbounded)
        self.continuation = continuation
        for event in initial { continuation.yield(event) }
        let registrations = sources.map { source in
            let token = source.center.addObserver(forName: source.name, object: nil, queue: nil) { _ in
                continuation.yield(source.event)
            }
            return (center: source.center, token: token)
        }
        self.registrations = Locked(registrations)
        Task {
            for await event in stream { await apply(event) }
        }
    }

    /// Observes `sources` for `client`, which it does not keep alive.
    convenience init(client: TesseraClient, sources: [Source], initial: [LifecycleEvent] = []) {
        self.init(sources: sources, initial: initial) { [weak client] event in
            await client?.handleLifecycleEvent(event)
        }
    }

    deinit {
        for registration in registrations.withLock({ $0 }) {
            registration.center.removeObserver(registration.token)
        }
        continuation.finish()
    }
}

extension TesseraClient {
    /// Applies one lifecycle event.
    func handleLifecycleEvent(_ event: LifecycleEvent) {
        switch event {
        case .didEnterBackground, .launchedInBackground:
            enterBackground()
        case .willEnterForeground:
            enterForeground()
        case .protectedDataDidBecomeAvailable:
            guard state == nil, !work.isStarting else { return }
            Task { try? await self.start() }
        }
    }
}
