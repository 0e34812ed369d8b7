public import Foundation

extension TesseraClient {
    /// `Bearer <session JWT>` for the app's own backend, refreshed through authenticate first when the
    /// JWT is within the refresh margin (30 s) of its expiry, in server time.
    /// - Throws: `no_session` when there is no session; the error of the refresh otherwise.
    public func authorizationHeader() async throws -> String {
        "Bearer \(try await freshSessionJWT(force: false))"
    }

    /// Fetches the profile again (`GET /v1/me`) and publishes it.
    @discardableResult
    public func refreshProfile() async throws -> Profile {
        _ = try await requireState()
        let gen = ledger.generation
        let token = state?.session?.token
        let me: MeResponse = try await withCustomerToken { jwt in
            try await self.api.me(credential: jwt)
        }
        try check(gen)
        if state?.session?.token == token, var current = state?.session {
            current.profile = me.profile
            current.capabilities = me.capabilities
            state?.session = current
            persist()
            publishCurrent()
        }
        return me.profile
    }

    /// Registers an APNs device token (the raw `Data` from `didRegisterForRemoteNotificationsWithDeviceToken`),
    /// bound to the current session.
    /// - Parameters:
    ///   - deviceToken: The token bytes; sent hex-encoded.
    ///   - environment: Sandbox or production.
    /// - Returns: The registered device.
    @discardableResult
    public func registerDeviceToken(_ deviceToken: Data, environment: PushEnvironment) async throws -> Device {
        let hex = deviceToken.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
        return try await registerDeviceToken(hex, platform: .apns, environment: environment)
    }

    /// Registers a push token (APNs hex or FCM registration token), bound to the current session.
    /// - Parameters:
    ///   - token: The push token.
    ///   - platform: APNs or FCM.
    ///   - environment: Sandbox or production.
    /// - Returns: The registered device.
    @discardableResult
    public func registerDeviceToken(_ token: String, platform: PushPlatform, environment: PushEnvironment)
        async throws -> Device
    {
        _ = try await requireState()
        guard let session = state?.session else {
            throw TesseraError(.noSession, message: "Register the push token once there is a session.")
        }
        let gen = ledger.generation
        let body = DeviceRequest(platform: platform, token: token, environment: environment)
        let device = try await withCustomerToken { jwt in
            try await self.api.registerDevice(body, credential: jwt)
        }
        try check(gen)
        guard let current = state?.session, current.session.id == session.session.id else {
            throw TesseraError(.superseded, message: "The session changed during registration.")
        }
        state?.device = StoredDevice(device: device, pushToken: token, sessionToken: current.token)
        persist()
        return device
    }

    // MARK: Customer token

    /// The session JWT, refreshed first when within the margin of expiry (or when `force`).
    func freshSessionJWT(force: Bool) async throws -> String {
        _ = try await requireState()
        guard let current = state?.session else {
            throw TesseraError(.noSession, message: "There is no session.")
        }
        let margin = configuration.jwtRefreshMargin.timeInterval
        if !force, serverNow(current).addingTimeInterval(margin) < current.jwtExpiresAt {
            return current.jwt
        }
        return try await authenticateShared(durationMinutes: nil).jwt
    }

    /// Runs a private call with the session JWT; a 401 triggers one refresh and one retry, never more.
    func withCustomerToken<Response>(
        _ call: @Sendable (String) async throws -> Response
    ) async throws -> Response {
        let jwt = try await freshSessionJWT(force: false)
        do {
            return try await call(jwt)
        } catch let error as TesseraError where error.httpStatus == 401 {
            log(.info, "private call answered 401 (\(error.code)); refreshing once")
            let refreshed = try await freshSessionJWT(force: true)
            return try await call(refreshed)
        }
    }
}
