/// One write of a push device's registration, as data: ``DeviceRegistrationProcedure`` lists them
/// in order and each backend only translates each to its SQL.
enum DeviceRegistrationStep: Sendable {
    /// Removes the project's devices that hold the same push token on the same platform, with a
    /// `device.removed` for each: a token bound elsewhere moves to the new device.
    case releaseToken(projectID: String, platform: String, token: String)
    /// Writes the new device.
    case insertDevice(DeviceRecord)
    /// An event that depends on nothing the database answers.
    case event(EventDraft)
}

/// A push device's registration, decided once for both backends: the check on the session it is
/// bound to as the transaction found it, then the writes as steps.
struct DeviceRegistrationProcedure: Sendable {
    /// The writes, in order.
    var steps: [DeviceRegistrationStep]

    /// Decides a registration's writes.
    ///
    /// - Parameters:
    ///   - device: the new device.
    ///   - session: the revocation and expiry of the device's session as the transaction found it
    ///     (on PostgreSQL, under FOR SHARE); nil when the session is gone.
    /// - Throws: `session_not_found`, `session_revoked` or `session_expired` when the session ended
    ///   since the request was authenticated (a revoke or an erasure that committed in between): a
    ///   device is never bound to an ended session.
    static func make(_ device: DeviceRecord, session: (revokedAt: Int64?, expiresAt: Int64)?) throws
        -> DeviceRegistrationProcedure
    {
        guard let session else { throw CoreError.sessionNotFound }
        try CredentialResolver.checkAlive(
            revokedAt: session.revokedAt, expiresAt: session.expiresAt, now: device.createdAt)
        return DeviceRegistrationProcedure(steps: [
            .releaseToken(projectID: device.projectID, platform: device.platform, token: device.token),
            .insertDevice(device),
            .event(.deviceRegistered(deviceID: device.id, profileID: device.profileID, sessionID: device.sessionID)),
        ])
    }
}
