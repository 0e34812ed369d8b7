import Hummingbird
import TesseraTokens

private struct DeviceBody: RequestBody {
    static let readMembers: Set<String>? = ["platform", "token", "environment"]

    var platform: String
    var token: String
    var environment: String?
}

extension TesseraAPI {
    /// `GET /v1/me`
    func me(_ request: Request) async throws -> Response {
        let caller = try await requireSession(request)
        return json { writer in
            writer.objectStart()
            writer.key("profile")
            writer.profile(caller.context.profile)
            writer.key("capabilities")
            writer.capabilities(caller.context.session)
            writer.objectEnd()
        }
    }

    /// `POST /v1/devices`
    func registerDevice(_ request: Request) async throws -> Response {
        let caller = try await requireSession(request)
        let body = try await decode(DeviceBody.self, from: request)
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
        let device = try await store.registerDevice(
            DeviceRecord(
                id: OpaqueToken.identifier(prefix: "dev_"), projectID: caller.runtime.id,
                sessionID: caller.context.session.id, profileID: caller.context.profile.id, platform: body.platform,
                environment: environment, token: body.token, createdAt: currentTime().seconds))
        return json(.created) { writer in
            writer.objectStart()
            writer.key("device")
            writer.device(device, includeToken: false)
            writer.objectEnd()
        }
    }

    /// `DELETE /v1/devices/{device_id}`
    ///
    /// An unverified session removes only the devices it registered itself (see ``listSessions(_:)``).
    func deleteDevice(_ request: Request, deviceID: String) async throws -> Response {
        let caller = try await requireSession(request)
        if caller.context.session.kind == .unverified {
            let devices = try await store.liveDevices(profileID: caller.context.profile.id, now: currentTime().seconds)
            guard
                devices.contains(where: {
                    $0.id.utf8.elementsEqual(deviceID.utf8)
                        && $0.sessionID.utf8.elementsEqual(caller.context.session.id.utf8)
                })
            else { throw CoreError.notFound }
        }
        guard try await store.deleteDevice(deviceID: deviceID, profileID: caller.context.profile.id) else {
            throw CoreError.notFound
        }
        return noContent()
    }
}
