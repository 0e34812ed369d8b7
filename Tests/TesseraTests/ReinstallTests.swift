import Foundation
import Testing

@testable import Tessera

@Suite("Reinstall")
struct ReinstallTests {
    @Test("By default a reinstalled app revokes the previous session and starts a fresh anonymous identity")
    func startFresh() async throws {
        try await Device.with { device in
            let (first, installation) = try await device.firstRun()
            let token = try #require(try first.storedState()?.session?.token)

            device.deleteApp()
            let second = device.launch()
            let events = Recorder(second.client.events)
            try await second.client.start()
            _ = await events.first { $0 == .previousInstallationFound(restored: false) }
            #expect(await second.client.installationID != installation)
            await second.client.flushPendingRevocations()  // joins the flush that start() began
            #expect(device.server.session(token: token)?.endCode == "session_revoked")
            #expect(try device.marker.read() != nil, "the new installation is marked")
            await second.client.stop()

            // The next launch is a relaunch, not a reinstall.
            let third = device.launch()
            let thirdEvents = Recorder(third.client.events)
            try await third.client.start()
            #expect(await third.client.installationID == (await second.client.installationID))
            #expect(!thirdEvents.values.contains(.previousInstallationFound(restored: false)))
            await third.client.stop()
        }
    }

    @Test("With ReinstallPolicy.restore the previous identity and session are kept")
    func restore() async throws {
        try await Device.with { device in
            let (first, installation) = try await device.firstRun()
            let token = try #require(try first.storedState()?.session?.token)
            device.deleteApp()
            let second = device.launch { $0.reinstallPolicy = .restore }
            let events = Recorder(second.client.events)
            try await second.client.start()
            _ = await events.first { $0 == .previousInstallationFound(restored: true) }
            #expect(await second.client.installationID == installation)
            #expect(try second.storedState()?.session?.token == token)
            #expect(device.server.session(token: token)?.endCode == nil)
            #expect(try second.storedState()?.installMarker == (try device.marker.read()))
            await second.client.stop()
        }
    }

    @Test("A state written before markers existed is adopted, not taken for a reinstall")
    func unmarkedState() async throws {
        try await Device.with { device in
            let first = device.launch(marker: false)
            try await first.start(quiet: true)
            #expect(try first.storedState()?.installMarker == nil)
            let installation = try #require(await first.client.installationID)
            let second = device.launch()
            let events = Recorder(second.client.events)
            try await second.client.start()
            #expect(await second.client.installationID == installation)
            #expect(try second.storedState()?.installMarker == (try device.marker.read()))
            #expect(!events.values.contains(.previousInstallationFound(restored: false)))
            await second.client.stop()
        }
    }

    @Test("A marker that exists but cannot be read (data protection) does not block restoring the state")
    func unreadableMarker() async throws {
        try await Device.with { device in
            let (_, installation) = try await device.firstRun()
            // A directory in the marker's place: open succeeds, read fails (EISDIR), as a protected file's would.
            try FileManager.default.removeItem(at: device.marker.file)
            try FileManager.default.createDirectory(at: device.marker.file, withIntermediateDirectories: true)
            #expect(throws: CredentialStoreError.self) { try device.marker.read() }
            let second = device.launch()
            let events = Recorder(second.client.events)
            try await second.client.start()
            #expect(await second.client.installationID == installation)
            #expect(second.transport.count("POST /v1/sessions/anonymous") == 0)
            #expect(!events.values.contains(.previousInstallationFound(restored: false)))
            await second.client.stop()
        }
    }

    @Test("The decision table")
    func classify() {
        #expect(InstallationCheck.classify(stateMarker: nil, fileMarker: nil) == .unmarked)
        #expect(InstallationCheck.classify(stateMarker: nil, fileMarker: "a") == .unmarked)
        #expect(InstallationCheck.classify(stateMarker: "a", fileMarker: "a") == .sameInstallation)
        #expect(InstallationCheck.classify(stateMarker: "a", fileMarker: nil) == .previousInstallation)
        #expect(InstallationCheck.classify(stateMarker: "a", fileMarker: "b") == .previousInstallation)
    }
}
