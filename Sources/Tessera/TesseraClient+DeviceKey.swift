import Foundation

extension TesseraClient {
    /// Where this installation's device key lives, once ``start()`` loaded it; nil before, or when
    /// ``TesseraConfiguration/bindsSessionsToDevice`` is false.
    public var deviceKeyTier: DeviceKeyTier? { proofs.isEnabled ? proofs.key?.tier : nil }

    /// Loads this installation's device key (or makes it) when sessions are bound to it and it is not
    /// loaded yet; at start and at each heartbeat until it is.
    /// - Throws: `storage_unavailable` and the other storage errors when the store cannot be read now:
    ///   nothing is made then, and requests wait for the key (they fail as transient).
    func loadDeviceKey() throws(TesseraError) {
        guard let loaded = try proofs.loadKey() else { return }
        if let offset = state?.session?.serverTimeOffset { proofs.restoreOffset(offset) }
        switch loaded.origin {
        case .restored: log(.debug, "device key restored (\(loaded.key.tier.rawValue))")
        case .created: log(.info, "new device key (\(loaded.key.tier.rawValue))")
        case .replacedUnreadable:
            log(.warning, "the stored device key cannot be used any more: replaced (\(loaded.key.tier.rawValue))")
        }
    }

    /// Whether `session` is bound to a device key other than this installation's current one: the key
    /// went missing, could not be restored, or was replaced.
    func isBoundToAnotherKey(_ session: StoredSession) -> Bool {
        guard proofs.isEnabled, let bound = session.session.binding?.thumbprint, let mine = proofs.thumbprint
        else { return false }
        return bound != mine
    }

    /// Re-establishes, quietly, a session bound to a device key that is gone: no request of it can ever
    /// succeed again, but the user is not signed out. A verified user identifies again through the
    /// identity-token provider, a user of ``identify(userID:)`` with that user ID, an anonymous one
    /// restores the installation's identity (an anonymous start with the installation secret); each with
    /// the new key. The session is replaced in place: no `.signedOut` state or event, no
    /// ``TesseraEvent/sessionEnded(_:)``.
    ///
    /// A transient failure (offline, the provider timing out) keeps the old session and is retried at the
    /// next heartbeat. Only when the user cannot be re-established at all (a verified user and no
    /// provider, or a provider that gives no token) does the session end as one the server ended, with
    /// reason ``UnavailableReason/deviceKeyLost`` and the fallback policy.
    func recoverFromKeyLoss() async {
        if let running = keyRecoveryTask { return await running.value }
        guard let lost = state?.session, isBoundToAnotherKey(lost) else { return }
        work.taskBegan()
        let task = Task {
            defer {
                self.keyRecoveryTask = nil
                self.work.taskEnded()
            }
            await self.reestablish(boundToLostKey: lost)
        }
        keyRecoveryTask = task
        await task.value
    }

    private func reestablish(boundToLostKey lost: StoredSession) async {
        log(.warning, "session \(lost.session.id) is bound to a device key that is gone: re-establishing it")
        let device = state?.device.flatMap { $0.sessionToken == lost.token ? $0 : nil }
        do {
            switch lost.capabilities.kind {
            case .verified:
                guard let provider = identityTokenProvider,
                    let token = try await identityToken(
                        from: provider,
                        for: IdentityTokenRequest(externalUserID: lost.profile.externalID, reason: .deviceKeyLost))
                else { break }
                guard state?.session?.token == lost.token else { return }
                // The identify moves the push token to the new session.
                _ = try await performIdentify(.signed(token), generation: ledger.advanceForIdentify())
                return
            case .unverified:
                guard let userID = lost.profile.externalID else { break }
                _ = try await performIdentify(.userID(userID), generation: ledger.advanceForIdentify())
                return
            default:
                let established = try await establishSession(replacing: lost)
                if let device, established.token != lost.token, state?.session?.token == established.token {
                    await moveDevice(device)
                }
                return
            }
        } catch {
            let error = TesseraError.wrapping(error)
            if error.isTransient || error.code == .cancelled || error.code == .superseded {
                log(.info, "re-establishing after the device key was lost failed (\(error.code)); will retry")
                return
            }
            log(.warning, "re-establishing after the device key was lost failed: \(error.code)")
            eventBroadcaster.publish(.authenticationFailed(error))
        }
        // Nothing can bring this user back quietly: the session ends as one the server ended would.
        endSession(.deviceKeyLost, token: lost.token)
    }

    private func moveDevice(_ device: StoredDevice) async {
        do {
            _ = try await registerDeviceToken(
                device.pushToken, platform: device.device.platform, environment: device.device.environment)
        } catch {
            log(.warning, "could not move the push token to the new session: \(TesseraError.wrapping(error).code)")
            eventBroadcaster.publish(.deviceRegistrationLost(pushToken: device.pushToken))
        }
    }
}
