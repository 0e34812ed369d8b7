import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Builds requests for the Tessera wire contract, sends them through the injected transport and
/// maps every answer to a decoded value or a `TesseraError`.
struct APIClient: Sendable {
    let baseURL: URL
    let publishableKey: String
    let transport: TesseraConfiguration.Transport
    let timeout: Duration
    /// Signs every request with the device key (RFC 9449), when sessions are bound to it.
    let proofs: DeviceProofs

    init(configuration: TesseraConfiguration, proofs: DeviceProofs) {
        baseURL = configuration.serverURL
        publishableKey = configuration.publishableKey
        transport = configuration.transport
        timeout = configuration.requestTimeout
        self.proofs = proofs
    }

    /// The tier of the key that signs this request's proof, declared when a session is bound to it.
    private var keyTier: DeviceKeyTier? { proofs.isEnabled ? proofs.key?.tier : nil }

    // MARK: Endpoints

    func createAnonymousSession(_ body: AnonymousRequest) async throws(TesseraError) -> SessionEnvelope {
        var body = body
        body.keyTier = keyTier
        return try await send("POST", "v1/sessions/anonymous", body: body, credential: publishableKey)
    }

    func identify(_ body: IdentifyRequest, credential: String) async throws(TesseraError) -> SessionEnvelope {
        var body = body
        body.keyTier = keyTier
        return try await send("POST", "v1/sessions/identify", body: body, credential: credential)
    }

    /// A single-use App Attest challenge (base64url of 32 bytes), valid five minutes.
    func appAttestChallenge() async throws(TesseraError) -> String {
        let response: AppAttestChallengeResponse = try await send(
            "POST", "v1/attestations/challenge", body: EmptyBody?.none, credential: publishableKey)
        return response.challenge
    }

    func authenticate(sessionToken: String, durationMinutes: Int?) async throws(TesseraError) -> SessionEnvelope {
        try await send(
            "POST", "v1/sessions/authenticate", body: AuthenticateRequest(sessionDurationMinutes: durationMinutes),
            credential: sessionToken)
    }

    func revoke(sessionToken: String) async throws(TesseraError) {
        try await sendExpectingNoContent("POST", "v1/sessions/revoke", body: EmptyBody(), credential: sessionToken)
    }

    func listSessions(sessionToken: String) async throws(TesseraError) -> [Session] {
        let response: SessionsResponse = try await send(
            "GET", "v1/sessions", body: EmptyBody?.none, credential: sessionToken)
        return response.sessions
    }

    func revokeSession(id: String, sessionToken: String) async throws(TesseraError) {
        let id = try pathComponent(id)
        try await sendExpectingNoContent("DELETE", "v1/sessions/\(id)", body: EmptyBody?.none, credential: sessionToken)
    }

    func revokeOtherSessions(sessionToken: String) async throws(TesseraError) -> Int {
        let response: SessionsEndedResponse = try await send(
            "POST", "v1/sessions/revoke-others", body: EmptyBody(), credential: sessionToken)
        return response.ended
    }

    func me(credential: String) async throws(TesseraError) -> MeResponse {
        try await send("GET", "v1/me", body: EmptyBody?.none, credential: credential)
    }

    func registerDevice(_ body: DeviceRequest, credential: String) async throws(TesseraError) -> Device {
        let response: DeviceResponse = try await send("POST", "v1/devices", body: body, credential: credential)
        return response.device
    }

    func deleteDevice(id: String, credential: String) async throws(TesseraError) {
        let id = try pathComponent(id)
        try await sendExpectingNoContent("DELETE", "v1/devices/\(id)", body: EmptyBody?.none, credential: credential)
    }

    /// Deletes a device; succeeds when it is gone already (not found, or its session ended).
    func unregisterDevice(id: String, credential: String) async throws(TesseraError) {
        do {
            try await deleteDevice(id: id, credential: credential)
        } catch {
            guard error.endsSession || error.code == .notFound else { throw error }
        }
    }

    /// Revokes a session; succeeds when it is not alive any more.
    func revokeIfAlive(sessionToken: String) async throws(TesseraError) {
        do {
            try await revoke(sessionToken: sessionToken)
        } catch {
            guard error.endsSession else { throw error }
        }
    }

    // MARK: Plumbing

    private func pathComponent(_ id: String) throws(TesseraError) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_"))
        guard !id.isEmpty, id.unicodeScalars.allSatisfy({ allowed.contains($0) }) else {
            throw TesseraError(.invalidRequest, message: "Not a valid identifier.")
        }
        return id
    }

    func send<Body: Encodable, Response: Decodable>(
        _ method: String, _ path: String, body: Body?, credential: String
    ) async throws(TesseraError) -> Response {
        let (data, _) = try await perform(method, path, body: body, credential: credential)
        let receivedAt = proofs.clock.now()
        let response: Response
        do {
            response = try WireCoding.decoder().decode(Response.self, from: data)
        } catch {
            throw TesseraError(.invalidResponse, message: "Undecodable answer to \(method) /\(path).")
        }
        if let envelope = response as? SessionEnvelope {
            proofs.noteServerTime(envelope.serverTime, receivedAt: receivedAt)
        }
        return response
    }

    func sendExpectingNoContent<Body: Encodable>(
        _ method: String, _ path: String, body: Body?, credential: String
    ) async throws(TesseraError) {
        _ = try await perform(method, path, body: body, credential: credential)
    }

    /// Sends one request; with the device key's proof when sessions are bound to it. A `use_dpop_nonce`
    /// refusal is sent again once with the nonce it names, and a proof refused after the server's clock
    /// (an answer's `Date`) showed the device clock is off is sent again once with the corrected time.
    private func perform<Body: Encodable>(
        _ method: String, _ path: String, body: Body?, credential: String
    ) async throws(TesseraError) -> (Data, HTTPURLResponse) {
        var retriedNonce = false
        var retriedClock = false
        while true {
            let (request, proofOffset) = try makeRequest(method, path, body: body, credential: credential)
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await transport(request)
            } catch {
                throw TesseraError.wrapping(error)
            }
            if Task.isCancelled { throw TesseraError(.cancelled, message: "The task was cancelled.") }
            guard let http = response as? HTTPURLResponse else {
                throw TesseraError(.invalidResponse, message: "Not an HTTP response.")
            }
            let nonce = http.value(forHTTPHeaderField: "DPoP-Nonce")
            proofs.noteNonce(nonce)
            proofs.noteDateHeader(http.value(forHTTPHeaderField: "Date"), receivedAt: proofs.clock.now())
            if (200..<300).contains(http.statusCode) { return (data, http) }
            let error = Self.error(status: http.statusCode, data: data, headers: http)
            guard let proofOffset else { throw error }
            if error.code == .useDPoPNonce, nonce != nil, !retriedNonce {
                retriedNonce = true
                continue
            }
            if error.code == .dpopProofInvalid, proofs.offsetMoved(since: proofOffset), !retriedClock {
                retriedClock = true
                continue
            }
            throw error
        }
    }

    /// The request, with a fresh proof (a new `jti`) each time it is made, and the clock offset the
    /// proof's `iat` used (nil without a proof).
    private func makeRequest<Body: Encodable>(
        _ method: String, _ path: String, body: Body?, credential: String
    ) throws(TesseraError) -> (URLRequest, TimeInterval?) {
        let url = baseURL.appendingPathComponent(path)
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = timeout.timeInterval
        // Also when the app supplies its own URLSession transport: no cookie jar, no cached answers.
        request.httpShouldHandleCookies = false
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        var encoded: Data?
        if let body {
            do {
                encoded = try WireCoding.encoder().encode(body)
            } catch {
                throw TesseraError(.invalidRequest, message: "Unencodable request body.")
            }
        }
        // The proof names the body it goes with (an extension's must: a proof does not otherwise
        // cover the body, and a heartbeat's proof must not extend the session).
        let signed = try proofs.proof(method: method, url: url, credential: credential, body: encoded)
        if let (proof, _) = signed {
            // A session credential goes with the DPoP scheme (a bound session refuses Bearer); the
            // publishable key stays Bearer, its proof binds the session it opens.
            let scheme = credential == publishableKey ? "Bearer" : "DPoP"
            request.setValue("\(scheme) \(credential)", forHTTPHeaderField: "Authorization")
            request.setValue(proof, forHTTPHeaderField: "DPoP")
        } else {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }
        request.setValue("tessera-swift/1", forHTTPHeaderField: "User-Agent")
        if let encoded {
            request.httpBody = encoded
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return (request, signed?.serverTimeOffset)
    }

    static func error(status: Int, data: Data, headers: HTTPURLResponse) -> TesseraError {
        let requestID = headers.value(forHTTPHeaderField: "X-Request-Id")
        let retryAfter = headers.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init).map {
            Duration.seconds(max($0, 0))
        }
        if let body = try? JSONDecoder().decode(ErrorResponse.self, from: data) {
            var code = TesseraError.Code(rawValue: body.error.code)
            if status >= 500 && code.rawValue.isEmpty { code = .serverUnavailable }
            return TesseraError(
                code, message: body.error.message ?? body.error.code, httpStatus: status, requestID: requestID,
                retryAfter: retryAfter, reason: body.error.reason)
        }
        let code: TesseraError.Code
        switch status {
        case 429: code = .rateLimited
        case 401: code = .invalidCredentials
        case 404: code = .notFound
        case 413: code = .payloadTooLarge
        case 500...: code = .serverUnavailable
        default: code = .invalidResponse
        }
        return TesseraError(
            code, message: "HTTP \(status) without an error body.", httpStatus: status, requestID: requestID,
            retryAfter: retryAfter)
    }
}
