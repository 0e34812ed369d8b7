import Foundation
import Testing

@testable import Tessera

@Suite("Keychain store under device faults")
struct KeychainStoreTests {
    static let faults: [FakeKeychain.Fault] = [.locked, .spuriousNotFound, .missingEntitlement, .invalidParameter]

    @Test(
        "A keychain fault at launch keeps the identity and the server session: no new installation, profile or overwrite",
        arguments: faults, [true, false])
    func faultAtLaunch(fault: FakeKeychain.Fault, withMarker: Bool) async throws {
        try await Device.with { device in
            let first = device.launch(marker: withMarker)
            try await first.start(quiet: true)
            let installation = try #require(await first.client.installationID)
            let token = try #require(try first.storedState()?.session?.token)
            let stored = try #require(device.keychain.items["tessera"])
            let (profiles, installations) = (device.profileCount, device.installationCount)

            let callsBefore = device.keychain.calls.count
            device.keychain.setFault(fault)
            let second = device.launch(marker: withMarker)
            let permanent = fault == .missingEntitlement || fault == .invalidParameter
            let expected: TesseraError.Code = permanent ? .storageMisconfigured : .storageUnavailable
            await #expect {
                try await second.client.start()
            } throws: { ($0 as? TesseraError)?.code == expected }
            #expect(
                second.client.sessionState == .unavailable(permanent ? .storageMisconfigured : .storageUnavailable))
            #expect(await second.client.installationID == nil)
            if permanent {
                #expect(await second.client.maintenanceTask == nil, "a permanent failure is not retried by itself")
            } else {
                // Retries while the fault lasts change nothing.
                for _ in 0..<3 {
                    await second.clock.waitForSleepers(count: 1)
                    second.clock.advance(by: .seconds(60))
                }
                await second.clock.waitForSleepers(count: 1)
                #expect(await second.client.installationID == nil)
            }
            #expect(second.transport.log.isEmpty, "no anonymous session for a new identity")
            #expect(device.keychain.items["tessera"] == stored, "the stored state is never overwritten")
            let callsDuringFault = device.keychain.calls.dropFirst(callsBefore)
            #expect(!callsDuringFault.contains("update tessera") && !callsDuringFault.contains("delete tessera"))

            device.keychain.setFault(nil)
            let states = Recorder(second.client.sessionUpdates)
            if permanent {
                try await second.client.start()
            } else {
                second.clock.advance(by: .seconds(60))
            }
            _ = await states.first { $0.value != nil }
            #expect(await second.client.installationID == installation)
            #expect(try second.storedState()?.session?.token == token)
            #expect(device.server.session(token: token)?.endCode == nil, "the server session is alive")
            #expect(second.transport.count("POST /v1/sessions/anonymous") == 0)
            #expect(device.profileCount == profiles && device.installationCount == installations)
            await second.client.stop()
        }
    }

    @Test("First launch while the keychain cannot write: no anonymous session until the first write succeeds")
    func firstWriteBeforeSession() async throws {
        try await Device.with { device in
            device.keychain.setFault(.spuriousNotFound)
            let harness = device.launch()
            await #expect(throws: TesseraError.self) { try await harness.client.start() }
            #expect(harness.transport.log.isEmpty)
            #expect(device.keychain.items.isEmpty)
            #expect(harness.client.sessionState == .unavailable(.storageUnavailable))
            device.keychain.setFault(nil)
            let states = Recorder(harness.client.sessionUpdates)
            await harness.clock.waitForSleepers(count: 1)
            harness.clock.advance(by: .seconds(60))
            _ = await states.first { $0.value != nil }
            let stored = try #require(try harness.storedState())
            #expect(stored.installationID == (await harness.client.installationID))
            let marker = try device.marker.read()
            #expect(stored.installMarker != nil && stored.installMarker == marker)
            #expect(device.keychain.items[KeychainBackedStore.probeAccount] != nil, "the probe is written at install")
            #expect(harness.transport.count("POST /v1/sessions/anonymous") == 1)
            await harness.client.stop()
        }
    }

    @Test("Another process adds the state between our read and our add: we adopt it, never overwrite it")
    func duplicateOnFirstWrite() async throws {
        try await Device.with { device in
            var theirs = PersistedState.freshInstallation()
            theirs.installMarker = "marker-of-the-extension"
            let theirBytes = try WireCoding.encoder().encode(theirs)
            let extensionStore = device.store()
            device.keychain.beforeNextAdd {
                _ = try? extensionStore.create(theirBytes, for: "tessera")
            }
            let harness = device.launch(marker: false)
            try await harness.client.start()
            #expect(await harness.client.installationID == theirs.installationID)
            #expect(device.installationCount == 1)
            #expect(
                device.server.state.withLock { $0.installations[theirs.installationID.uuidString.lowercased()] } != nil)
            #expect(try harness.storedState()?.installationSecret == theirs.installationSecret)
            await harness.client.stop()
        }
    }

    @Test("A read that returns garbage once is read again: the identity survives")
    func undecodableOnce() async throws {
        try await Device.with { device in
            let (_, installation) = try await device.firstRun()
            device.keychain.scriptReads("tessera", .found(Data("garbage".utf8)))
            let second = device.launch()
            let events = Recorder(second.client.events)
            try await second.client.start()
            #expect(await second.client.installationID == installation)
            #expect(second.transport.count("POST /v1/sessions/anonymous") == 0)
            #expect(device.keychain.items.keys.allSatisfy { !$0.contains("quarantined") })
            #expect(!events.values.contains(.storageCorrupted))
            await second.client.stop()
        }
    }

    @Test("Data that stays undecodable is quarantined (kept) and reported, then a fresh identity starts")
    func undecodableQuarantined() async throws {
        try await Device.with { device in
            let (_, installation) = try await device.firstRun()
            let garbage = Data("{\"version\":1,\"installationID\":".utf8)
            device.keychain.setItem(garbage, account: "tessera")
            let second = device.launch()
            let events = Recorder(second.client.events)
            try await second.client.start()
            _ = await events.first { $0 == .storageCorrupted }
            let quarantined = device.keychain.items.filter { $0.key.hasPrefix("tessera.quarantined.") }
            #expect(quarantined.count == 1)
            #expect(quarantined.first?.value == garbage, "the unreadable bytes are kept, not deleted")
            #expect(await second.client.installationID != installation)
            #expect(second.client.sessionState.value != nil)
            await second.client.stop()
        }
    }

    @Test("A keychain wiped under the app is believed only after the grace period, with the marker readable")
    func wipedKeychainAfterGrace() async throws {
        try await Device.with { device in
            let (_, installation) = try await device.firstRun()
            for account in device.keychain.items.keys { device.keychain.setItem(nil, account: account) }
            let second = device.launch()
            await #expect(throws: TesseraError.self) { try await second.client.start() }
            await second.clock.waitForSleepers(count: 1)
            second.clock.advance(by: .seconds(300))
            await second.clock.waitForSleepers(count: 1)
            #expect(await second.client.installationID == nil, "not believed within the grace period")
            #expect(second.transport.log.isEmpty)
            let states = Recorder(second.client.sessionUpdates)
            second.clock.advance(by: .seconds(400))
            _ = await states.first { $0.value != nil }
            #expect(await second.client.installationID != installation)
            await second.client.stop()
        }
    }

    @Test("Probe present, item absent: the absence is believed at once")
    func probeProvesAbsence() async throws {
        try await Device.with { device in
            let store = device.store()
            #expect(try store.create(Data("state".utf8), for: "tessera") == nil)
            _ = try device.marker.adopt("m")
            try store.remove("tessera")
            #expect(try store.load("tessera") == nil)
            #expect(try store.create(Data("new".utf8), for: "tessera") == nil)
            #expect(try store.create(Data("other".utf8), for: "tessera") == Data("new".utf8), "add-only")
            #expect(device.keychain.items["tessera"] == Data("new".utf8))
        }
    }

    @Test("An item left in the legacy keychain is moved once; an existing item wins; -34018 there means nothing")
    func legacyMigration() async throws {
        try await Device.with { device throws in
            let legacy = FakeKeychain()
            legacy.setItem(Data("old".utf8), account: "tessera")
            let store = KeychainBackedStore(
                keychain: device.keychain, legacyKeychain: legacy, installationMarker: device.marker)
            #expect(try store.load("tessera") == Data("old".utf8))
            #expect(device.keychain.items["tessera"] == Data("old".utf8))
            #expect(legacy.items["tessera"] == nil, "moved, not copied")

            legacy.setItem(Data("stale".utf8), account: "tessera")
            device.keychain.scriptReads("tessera", .failed(.itemNotFound))
            #expect(try store.load("tessera") == Data("old".utf8), "an item the read missed wins over the legacy copy")

            let unsigned = FakeKeychain()
            unsigned.setFault(.missingEntitlement)
            let other = Device()
            defer { other.deleteApp() }
            let fresh = KeychainBackedStore(
                keychain: other.keychain, legacyKeychain: unsigned, installationMarker: other.marker)
            #expect(try fresh.load("tessera") == nil)
        }
    }

    @Test("save: an item another process adds between our update and our add is updated, not duplicated")
    func saveDuplicateRace() async throws {
        try await Device.with { device in
            let store = device.store()
            let keychain = device.keychain
            keychain.beforeNextAdd { keychain.setItem(Data("theirs".utf8), account: "tessera") }
            try store.save(Data("ours".utf8), for: "tessera")
            #expect(keychain.items["tessera"] == Data("ours".utf8))
            #expect(
                keychain.calls.filter { $0.hasSuffix(" tessera") }
                    == ["update tessera", "add tessera", "update tessera"])
        }
    }

    @Test("Items: after first unlock, this device only, never synchronised; data-protection keychain only on request")
    func itemAttributes() {
        let plain = KeychainItemAttributes(service: "s", accessGroup: nil, useDataProtectionKeychain: false)
        #expect(plain.accessibleAfterFirstUnlockThisDeviceOnly)
        #expect(plain.synchronizable == false)
        #expect(plain.useDataProtectionKeychain == false)
    }

    @Test("OSStatus values map to the typed statuses, and only -34018 and -50 are permanent")
    func statusMapping() {
        let statuses: [Int32] = [0, -25300, -25299, -25308, -25291, -34018, -50, -128, -25293, -26276]
        for status in statuses { #expect(KeychainStatus(osStatus: status).osStatus == status) }
        #expect(KeychainStatus(osStatus: -34018) == .missingEntitlement)
        #expect(KeychainStatus(osStatus: -25308) == .interactionNotAllowed)
        #expect(
            statuses.map(KeychainStatus.init(osStatus:)).filter(\.isPermanent) == [
                .missingEntitlement, .invalidParameter,
            ])
        #expect(statuses.map(KeychainStatus.init(osStatus:)).filter(\.isDenial) == [.userCanceled, .authFailed])
    }

    @Test(
        "A refused prompt (errSecUserCanceled, errSecAuthFailed) is denied; a locked keychain is unavailable",
        arguments: [
            (KeychainStatus.userCanceled, true), (.authFailed, true), (.interactionNotAllowed, false),
        ])
    func refusedPrompt(status: KeychainStatus, denied: Bool) async throws {
        try await Device.with { device throws in
            let store = device.store()
            device.keychain.scriptReads("tessera", .failed(status))
            #expect {
                _ = try store.load("tessera")
            } throws: { error in
                switch error as? CredentialStoreError {
                case .denied: return denied
                case .unavailable: return !denied
                default: return false
                }
            }
        }
    }

    @Test("A refused prompt at launch: storage_access_denied, published, and not asked again at every backoff")
    func refusedPromptIsNotRetried() async throws {
        try await Device.with { device in
            _ = try await device.firstRun()
            let harness = device.launch()
            device.keychain.scriptReads("tessera", .failed(.userCanceled))
            await #expect {
                try await harness.client.start()
            } throws: { error in
                (error as? TesseraError)?.code == .storageAccessDenied
            }
            #expect(harness.client.sessionState == .unavailable(.storageAccessDenied))
            #expect(await harness.client.maintenanceTask == nil, "no retry loop: the prompt would come back")
            let reads = device.keychain.calls.filter { $0 == "read tessera" }.count
            harness.clock.advance(by: .seconds(3600))
            #expect(device.keychain.calls.filter { $0 == "read tessera" }.count == reads)
            // The next foreground asks again, once.
            await harness.client.enterForeground()
            try await harness.client.refreshSession()
            #expect(harness.client.sessionState.value != nil)
            await harness.client.stop()
        }
    }
}
