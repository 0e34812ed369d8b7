import Foundation
import Testing

@testable import Tessera

/// One device: a keychain that outlives the app, the app's container (where the installation marker
/// lives), one clock and one server. Each `launch()` is a new process of the app.
struct Device {
    let keychain = FakeKeychain()
    let container = temporaryDirectory()
    let clock = ManualClock()
    let server: FakeServer

    init() { server = FakeServer(clock: clock) }

    var marker: InstallationMarker { InstallationMarker(directory: container) }

    func store(marker: Bool = true) -> KeychainBackedStore {
        KeychainBackedStore(
            keychain: keychain, installationMarker: marker ? self.marker : nil, now: { [clock] in clock.now() })
    }

    func launch(marker: Bool = true, configure: (inout TesseraConfiguration) -> Void = { _ in }) -> Harness {
        Harness(store: store(marker: marker), clock: clock, server: server, configure: configure)
    }

    /// The app's first launch: starts (an anonymous identity is created and stored), stops, and answers
    /// that launch with the installation it created.
    func firstRun() async throws -> (harness: Harness, installation: UUID) {
        let first = launch()
        try await first.client.start()
        await first.client.stop()
        return (first, try #require(await first.client.installationID))
    }

    /// Runs `body` on a new device, then deletes the app (its container), whether `body` threw or not.
    static func with(_ body: (Device) async throws -> Void) async rethrows {
        let device = Device()
        defer { device.deleteApp() }
        try await body(device)
    }

    /// Deletes the app: its container goes, its keychain items stay.
    func deleteApp() { try? FileManager.default.removeItem(at: container) }

    var profileCount: Int { server.state.withLock { $0.profiles.count } }
    var installationCount: Int { server.state.withLock { $0.installations.count } }
}
