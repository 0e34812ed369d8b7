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
        let device = try await SessionActions(core: core).registerDevice(
            caller: caller,
            input: DeviceInput(platform: body.platform, token: body.token, environment: body.environment),
            clientAddress: addresses.key(request, context: context), now: core.currentTime().date)
        return .json(.created) { writer in
            writer.objectStart()
            writer.key("device")
            writer.device(device, includeToken: false)
            writer.objectEnd()
        }
    }

    /// `DELETE /v1/devices/{device_id}`
    func deleteDevice(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let deviceID = try context.parameters.require("device_id")
        try await SessionActions(core: core).deleteDevice(
            deviceID, caller: try context.session(), clientAddress: addresses.key(request, context: context),
            now: core.currentTime().date)
        return .noContent
    }
}
