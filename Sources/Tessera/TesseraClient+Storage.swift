import Foundation

extension TesseraClient {
    /// Reads the store: restores the state, creates a new installation, replaces a state that stays
    /// unreadable, or applies the ``ReinstallPolicy`` to a previous installation's state.
    ///
    /// Nothing is created on an ambiguous read: a store that cannot be read now leaves `state` nil (the
    /// caller throws `storage_unavailable` and retries), and a new installation exists only once the store
    /// took its first, add-only write; until then no anonymous session is asked for.
    func loadState() throws(TesseraError) {
        do throws(CredentialStoreError) {
            state = try readState()
            ledger.stored = state
        } catch {
            switch error {
            case .unavailable(let message), .corrupted(let message):
                log(.warning, "credential store unavailable: \(message)")
                sessionBroadcaster.publish(.unavailable(.storageUnavailable))
                profileBroadcaster.publish(.unavailable(.storageUnavailable))
                throw TesseraError(.storageUnavailable, message: "The credential store cannot be read now.")
            case .misconfigured(let message):
                log(.error, "credential store misconfigured: \(message)")
                sessionBroadcaster.publish(.unavailable(.storageMisconfigured))
                profileBroadcaster.publish(.unavailable(.storageMisconfigured))
                throw TesseraError(
                    .storageMisconfigured, message: "The credential store cannot work as configured: \(message)")
            case .denied(let message):
                log(.error, "credential store access denied: \(message)")
                sessionBroadcaster.publish(.unavailable(.storageAccessDenied))
                profileBroadcaster.publish(.unavailable(.storageAccessDenied))
                throw TesseraError(.storageAccessDenied, message: "Access to the credential store was refused.")
            }
        }
        needsPersist = false
        publishCurrent()
    }

    /// Stops the heartbeat's retries of a store that cannot work as configured.
    func stopRetryingStorage() {
        heartbeat.maintenanceTask?.cancel()
        heartbeat.maintenanceTask = nil
    }

    private func readState() throws(CredentialStoreError) -> PersistedState {
        let key = configuration.storageKey
        // A marker that exists but cannot be read yet (data protection) cannot tell a reinstall (whose
        // marker is absent, which reads fine) from a relaunch: a state found then is restored as it is.
        var markerID: String?
        var markerUnreadable = false
        do { markerID = try store.installationMarker?.read() } catch { markerUnreadable = true }
        var problem = ""
        // A value that does not decode is read a second time before it is given up.
        for _ in 0..<2 {
            do throws(CredentialStoreError) {
                guard let data = try store.load(key) else {
                    if markerUnreadable { throw .unavailable("the installation marker cannot be read yet") }
                    return try createInstallation(markerID: markerID, lastEndReason: nil)
                }
                if let restored = Self.decodeState(data) {
                    if markerUnreadable { return restored }
                    return try checkInstallation(restored, markerID: markerID)
                }
                problem = "undecodable state"
            } catch {
                guard case .corrupted(let message) = error else { throw error }
                problem = message
            }
        }
        if markerUnreadable { throw .unavailable("the installation marker cannot be read yet") }
        log(.error, "stored state unreadable (\(problem)): quarantined, starting a new installation")
        try store.quarantine(key)
        eventBroadcaster.publish(.storageCorrupted)
        return try createInstallation(markerID: markerID, lastEndReason: .storageLost)
    }

    static func decodeState(_ data: Data) -> PersistedState? {
        guard let state = try? WireCoding.decoder().decode(PersistedState.self, from: data),
            state.version == PersistedState.currentVersion
        else { return nil }
        return state
    }

    /// The first write of a new installation: add-only. A value the read missed is restored instead.
    private func createInstallation(markerID: String?, lastEndReason: UnavailableReason?)
        throws(CredentialStoreError) -> PersistedState
    {
        let key = configuration.storageKey
        var fresh = PersistedState.freshInstallation()
        fresh.lastEndReason = lastEndReason
        if store.installationMarker != nil { fresh.installMarker = markerID ?? UUID().uuidString.lowercased() }
        if let existing = try store.create(try encodeState(fresh), for: key) {
            guard let restored = Self.decodeState(existing) else {
                throw .unavailable("a state appeared that cannot be decoded yet")
            }
            log(.info, "restored installation \(restored.installationID.uuidString.lowercased()) on first write")
            return try checkInstallation(restored, markerID: markerID)
        }
        log(.info, "new installation")
        try adoptMarker(for: &fresh, markerID: markerID)
        return fresh
    }

    /// Tells a relaunch from a reinstall (a state the marker does not vouch for) and applies the policy.
    private func checkInstallation(_ restored: PersistedState, markerID: String?) throws(CredentialStoreError)
        -> PersistedState
    {
        var restored = restored
        guard store.installationMarker != nil else {
            log(.info, "restored installation \(restored.installationID.uuidString.lowercased())")
            return restored
        }
        var markerID = markerID
        var check = InstallationCheck.classify(stateMarker: restored.installMarker, fileMarker: markerID)
        if check == .previousInstallation {
            // Another process of this installation (an extension) may have written the marker just now.
            markerID = try store.installationMarker?.read()
            check = InstallationCheck.classify(stateMarker: restored.installMarker, fileMarker: markerID)
        }
        switch check {
        case .sameInstallation:
            installationMarkerID = markerID
            log(.info, "restored installation \(restored.installationID.uuidString.lowercased())")
            return restored
        case .unmarked:
            // Written before markers existed: this installation's own state (saved with the marker).
            try adoptMarker(for: &restored, markerID: markerID)
            return restored
        case .previousInstallation:
            switch configuration.reinstallPolicy {
            case .restore:
                log(.info, "previous installation found: restored")
                try adoptMarker(for: &restored, markerID: markerID)  // saves it with this installation's marker
                eventBroadcaster.publish(.previousInstallationFound(restored: true))
                return restored
            case .startFresh:
                log(.info, "previous installation found: its session is revoked, starting a new installation")
                var fresh = SessionLedger.freshInstallation(abandoning: restored, reason: nil)
                try adoptMarker(for: &fresh, markerID: markerID)  // saves it, replacing the previous state
                eventBroadcaster.publish(.previousInstallationFound(restored: false))
                if !fresh.pendingRevocations.isEmpty {
                    work.taskBegan()
                    Task {
                        await self.flushPendingRevocations()
                        self.work.taskEnded()
                    }
                }
                return fresh
            }
        }
    }

    /// Writes the marker when there is none (or takes the one another process wrote meanwhile), and
    /// stamps `state` with its ID. The state is saved again when the two differ.
    private func adoptMarker(for state: inout PersistedState, markerID: String?) throws(CredentialStoreError) {
        guard let marker = store.installationMarker else {
            state.installMarker = nil
            return
        }
        let proposed = markerID ?? state.installMarker ?? UUID().uuidString.lowercased()
        let adopted: String
        if let markerID { adopted = markerID } else { adopted = try marker.adopt(proposed) }
        installationMarkerID = adopted
        if state.installMarker != adopted {
            state.installMarker = adopted
            try store.save(try encodeState(state), for: configuration.storageKey)
        }
    }

    private func encodeState(_ state: PersistedState) throws(CredentialStoreError) -> Data {
        do {
            return try WireCoding.encoder().encode(state)
        } catch {
            throw .unavailable("the state cannot be encoded")
        }
    }
}

/// How a restored state relates to this installation of the app.
enum InstallationCheck: Equatable {
    /// The state carries this installation's marker.
    case sameInstallation
    /// The state predates markers: adopt it.
    case unmarked
    /// The state carries another installation's marker, or the marker file is gone: the app was
    /// deleted and installed again while its keychain items stayed.
    case previousInstallation

    static func classify(stateMarker: String?, fileMarker: String?) -> InstallationCheck {
        guard let stateMarker else { return .unmarked }
        return stateMarker == fileMarker ? .sameInstallation : .previousInstallation
    }
}
