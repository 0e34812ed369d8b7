import Foundation

/// A push device's registration, as read from its body.
struct DeviceInput: Sendable {
    var platform: String
    var token: String
    var environment: String?
}

extension SessionActions {
    /// `POST /v1/devices`: registers the push token of the caller's device (`apns` or `fcm`, in the
    /// `sandbox` or `production` environment) for the caller's session and profile.
    func registerDevice(caller: Caller, input: DeviceInput, clientAddress: String, now date: Date) async throws
        -> DeviceRecord
    {
        guard input.platform == "apns" || input.platform == "fcm" else {
            throw CoreError.invalidRequest("platform must be apns or fcm.")
        }
        let environment = input.environment ?? "production"
        guard environment == "sandbox" || environment == "production" else {
            throw CoreError.invalidRequest("environment must be sandbox or production.")
        }
        guard InputRules.isPushToken(input.token) else {
            throw CoreError.invalidRequest("token must be 1 to 4096 printable ASCII characters.")
        }
        return try await core.store.registerDevice(
            DeviceRecord(
                id: TimeOrderedID.make(prefix: "dev_"), projectID: caller.runtime.id,
                sessionID: caller.context.session.id, profileID: caller.context.profile.id, platform: input.platform,
                environment: environment, token: input.token, createdAt: Self.seconds(date)),
            origin: Self.origin(caller: caller, clientAddress: clientAddress))
    }

    /// `DELETE /v1/devices/{device_id}`: removes a device of the caller's profile; `not_found`
    /// otherwise.
    ///
    /// An unverified session removes only the devices it registered itself (as it lists only itself
    /// among sessions: ``sessions(caller:now:)``).
    func deleteDevice(_ deviceID: String, caller: Caller, clientAddress: String, now date: Date) async throws {
        let now = Self.seconds(date)
        // The caller's session is checked alive under its lock in the removal's transaction.
        guard
            let removed = try await core.store.deleteDevice(
                deviceID: deviceID, callerSessionID: caller.context.session.id,
                ownSessionOnly: caller.context.session.kind == .unverified, now: now,
                origin: Self.origin(caller: caller, clientAddress: clientAddress))
        else { try await callerEnded(caller, now: now) }
        guard removed else { throw CoreError.notFound }
    }
}
