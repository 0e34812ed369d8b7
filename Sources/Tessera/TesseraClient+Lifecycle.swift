import Foundation

// The platform tables of lifecycle notifications: the only Apple-only part of lifecycle handling.
// Everything else (ordering, what each event does) is in Internal/LifecycleObservation.swift.

#if canImport(UIKit) && !os(watchOS)
    import UIKit

    extension LifecycleObservation {
        /// The app's `UIApplication`, or nil in an app extension, which has none.
        ///
        /// `UIApplication.shared` is unavailable in extensions at compile time (`APPLICATION_EXTENSION_API_ONLY`),
        /// and this package is linked into extensions too: the instance is asked of the runtime, and only
        /// outside an extension bundle.
        @MainActor
        static func sharedApplication() -> UIApplication? {
            guard Bundle.main.bundleURL.pathExtension != "appex" else { return nil }
            let selector = NSSelectorFromString("sharedApplication")
            guard UIApplication.responds(to: selector) else { return nil }
            return UIApplication.perform(selector)?.takeUnretainedValue() as? UIApplication
        }

        /// UIKit (iOS, iPadOS, tvOS, visionOS, Mac Catalyst).
        static func install(client: TesseraClient) async -> LifecycleObservation? {
            await MainActor.run {
                let center = NotificationCenter.default
                let sources = [
                    Source(
                        center: center, name: UIApplication.didEnterBackgroundNotification, event: .didEnterBackground),
                    Source(
                        center: center, name: UIApplication.willEnterForegroundNotification,
                        event: .willEnterForeground),
                    Source(
                        center: center, name: UIApplication.protectedDataDidBecomeAvailableNotification,
                        event: .protectedDataDidBecomeAvailable),
                ]
                let launchedInBackground = Self.sharedApplication()?.applicationState == .background
                return LifecycleObservation(
                    client: client, sources: sources, initial: launchedInBackground ? [.launchedInBackground] : [])
            }
        }
    }
#elseif os(watchOS) && canImport(WatchKit)
    import WatchKit

    extension LifecycleObservation {
        /// WatchKit (watchOS 7 and later).
        static func install(client: TesseraClient) async -> LifecycleObservation? {
            await MainActor.run {
                let center = NotificationCenter.default
                let sources = [
                    Source(
                        center: center, name: WKApplication.didEnterBackgroundNotification, event: .didEnterBackground),
                    Source(
                        center: center, name: WKApplication.willEnterForegroundNotification,
                        event: .willEnterForeground),
                ]
                let launchedInBackground = WKApplication.shared().applicationState == .background
                return LifecycleObservation(
                    client: client, sources: sources, initial: launchedInBackground ? [.launchedInBackground] : [])
            }
        }
    }
#elseif canImport(AppKit)
    import AppKit

    extension LifecycleObservation {
        /// AppKit: the heartbeat pauses while the Mac sleeps and checks at once on wake.
        static func install(client: TesseraClient) async -> LifecycleObservation? {
            await MainActor.run {
                let workspace = NSWorkspace.shared.notificationCenter
                let sources = [
                    Source(center: workspace, name: NSWorkspace.willSleepNotification, event: .didEnterBackground),
                    Source(center: workspace, name: NSWorkspace.didWakeNotification, event: .willEnterForeground),
                    Source(
                        center: NotificationCenter.default, name: .NSApplicationProtectedDataDidBecomeAvailable,
                        event: .protectedDataDidBecomeAvailable),
                ]
                return LifecycleObservation(client: client, sources: sources)
            }
        }
    }
#else
    extension LifecycleObservation {
        /// No application lifecycle to observe on this platform: call `enterBackground()` /
        /// `enterForeground()` yourself if your process has such phases.
        static func install(client: TesseraClient) async -> LifecycleObservation? { nil }
    }
#endif
