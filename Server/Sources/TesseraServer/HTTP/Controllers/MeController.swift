import Hummingbird
import TesseraTokens

private struct DeviceBody: RequestBody {
    static let readMembers: Set<String>? = ["platform", "token", "environment"]

    var platform: String
    var token: String
    var environment: String?
}

/// `/v1/me` and `/v1/devices`: the calling session's profile and its push devices.
struct MeController: Sendable {
    let core: TesseraCore
    let bodies: BodyReader
    let addresses: ClientAddressReader

    /// `GET /v1/me`
    func me(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let caller = try context.session()
        return .json { writer in
            writer.objectStart()
            writer.key("profile")
            writer.profile(caller.context.profile)
            writer.key("capabilities")
            writer.capabilities(caller.context.session)
            writer.objectEnd()
        }
    }

    /// `POST /v1/devices`
    func registerDevice(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let caller = try context.session()
        let body = try await bodies.decode(DeviceBody.self, from: request)
        guard body.platform == "apns" || body.platform == "fcm" else {
            throw CoreError.invalidRequest("platform must be apns or fcm.")
        }
        let environment = body.environment ?? "production"
        guard environment == "sandbox" || environment == "production" else {
            throw CoreError.invalidRequest("environment must be sandbox or production.")
        }
        guard InputRules.isPushToken(body.token) else {
            throw CoreError.invalidRequest("token must be 1 to 4096 printable ASCII characters.")
        }
        let device = try await core.store.registerDevice(
            DeviceRecord(
                id: TimeOrderedID.make(prefix: "dev_"), projectID: caller.runtime.id,
                sessionID: caller.context.session.id, profileID: caller.context.profile.id, platform: body.platform,
                environment: environment, token: body.token, createdAt: core.currentTime().seconds),
            origin: addresses.sdkOrigin(request, context: context))
        return .json(.created) { writer in
            writer.objectStart()
            writer.key("device")
            writer.device(device, includeToken: false)
            writer.objectEnd()
        }
    }

    /// `DELETE /v1/devices/{device_id}`
    ///
    /// An unverified session removes only the devices it registered itself (as it lists only itself
    /// among sessions: ``SessionsController/listSessions(_:context:)``).
    func deleteDevice(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let deviceID = try context.parameters.require("device_id")
        let caller = try context.session()
        let now = core.currentTime().seconds
        // The caller's session is checked alive under its lock in the removal's transaction.
        guard
            let removed = try await core.store.deleteDevice(
                deviceID: deviceID, callerSessionID: caller.context.session.id,
                ownSessionOnly: caller.context.session.kind == .unverified, now: now,
                origin: addresses.sdkOrigin(request, context: context))
        else {
            _ = try await core.credentials.liveSession(id: caller.context.session.id, now: now)
            throw CoreError.sessionNotFound
        }
        guard removed else { throw CoreError.notFound }
        return .noContent
    }
}
