import Foundation

#if canImport(UIKit)
    import UIKit

    /// Wires a client to UIKit's background and foreground notifications.
    final class LifecycleObservation: Sendable {
        private let tokens: Locked<[any NSObjectProtocol]>

        private init(tokens: [any NSObjectProtocol]) {
            self.tokens = Locked(tokens)
        }

        static func install(client: TesseraClient) async -> LifecycleObservation {
            await MainActor.run { observe(client) }
        }

        @MainActor
        private static func observe(_ client: TesseraClient) -> LifecycleObservation {
            let center = NotificationCenter.default
            let background = center.addObserver(
                forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: nil
            ) { [weak client] _ in
                guard let client else { return }
                Task { await client.enterBackground() }
            }
            let foreground = center.addObserver(
                forName: UIApplication.willEnterForegroundNotification, object: nil, queue: nil
            ) { [weak client] _ in
                guard let client else { return }
                Task { await client.enterForeground() }
            }
            return LifecycleObservation(tokens: [background, foreground])
        }

        deinit {
            for token in tokens.withLock({ $0 }) { NotificationCenter.default.removeObserver(token) }
        }
    }
#elseif canImport(AppKit)
    import AppKit

    /// Wires a client to AppKit: the heartbeat pauses while the Mac sleeps and checks at once on wake.
    final class LifecycleObservation: Sendable {
        private let tokens: Locked<[any NSObjectProtocol]>
        private let center: NotificationCenter

        private init(tokens: [any NSObjectProtocol], center: NotificationCenter) {
            self.tokens = Locked(tokens)
            self.center = center
        }

        static func install(client: TesseraClient) async -> LifecycleObservation {
            await MainActor.run { observe(client) }
        }

        @MainActor
        private static func observe(_ client: TesseraClient) -> LifecycleObservation {
            let center = NSWorkspace.shared.notificationCenter
            let sleep = center.addObserver(forName: NSWorkspace.willSleepNotification, object: nil, queue: nil) {
                [weak client] _ in
                guard let client else { return }
                Task { await client.enterBackground() }
            }
            let wake = center.addObserver(forName: NSWorkspace.didWakeNotification, object: nil, queue: nil) {
                [weak client] _ in
                guard let client else { return }
                Task { await client.enterForeground() }
            }
            return LifecycleObservation(tokens: [sleep, wake], center: center)
        }

        deinit {
            for token in tokens.withLock({ $0 }) { center.removeObserver(token) }
        }
    }
#else
    /// No application lifecycle to observe on this platform: call `enterBackground()` /
    /// `enterForeground()` yourself if your process has such phases.
    final class LifecycleObservation: Sendable {
        static func install(client: TesseraClient) async -> LifecycleObservation? { nil }
    }
#endif
