import Foundation
import TesseraTokens

@testable import Tessera

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A small in-memory model of the Tessera server's session endpoints, good enough to drive the SDK:
/// installations, sessions (with their end codes), identify with merge, devices. Requests whose
/// endpoint is in `held` are not answered: the test takes them from the transport and answers them
/// with `reply(to:)` when it chooses, in any order.
final class FakeServer: Sendable {
    struct SessionRecord: Sendable {
        var id: String
        var token: String
        var profileID: String
        var kind: String  // anonymous | verified | unverified
        var installationID: String?
        var createdAt: Date
        var expiresAt: Date
        var endCode: String?  // nil while alive
        var jkt: String? = nil  // the device key it is bound to
        var keyTier: String? = nil
    }

    struct ProfileRecord: Sendable {
        var id: String
        var externalID: String?
        var verified: Bool
    }

    struct DeviceRecord: Sendable {
        var id: String
        var sessionID: String
        var token: String
    }

    struct State: Sendable {
        var counter = 0
        var installations: [String: (secret: String, profileID: String)] = [:]
        var profiles: [String: ProfileRecord] = [:]
        var sessions: [String: SessionRecord] = [:]  // by token
        var devices: [String: DeviceRecord] = [:]
        var held: Set<String> = []
        var scripted: [String: [Outcome]] = [:]
        var skew: TimeInterval = 0
        /// Like the project setting `session_binding: optional`: proofs are checked, bind at start and
        /// identify, and a bound session needs its key's proof.
        var binding = false
        /// Like `dpop_nonce_required`: the nonce every proof must carry.
        var requiredNonce: String?
        /// Every proof the server accepted, in order.
        var proofs: [DPoPProof] = []
        /// The answers that told the client to use a nonce.
        var nonceChallenges = 0
        /// App Attest: the mode, challenges, keys per installation, what each request carried.
        var appAttest = AppAttestModel()
    }

    static let keyRing = try! SessionKeyRing(signingKey: .generate(kid: "test"))
    static let publishableKey = "pk_test"

    let clock: ManualClock
    let state = Locked(State())

    init(clock: ManualClock) {
        self.clock = clock
    }

    var now: Date { clock.now().addingTimeInterval(state.withLock { $0.skew }) }

    // MARK: Test controls

    /// Holds requests to `endpoint` ("POST /v1/sessions/authenticate") for the test to answer.
    func hold(_ endpoint: String) { _ = state.withLock { $0.held.insert(endpoint) } }
    func release(_ endpoint: String) { _ = state.withLock { $0.held.remove(endpoint) } }
    /// The next requests to `endpoint` get these outcomes, in order, before normal service resumes.
    func script(_ endpoint: String, _ outcomes: Outcome...) {
        state.withLock { $0.scripted[endpoint, default: []].append(contentsOf: outcomes) }
    }
    func setSkew(_ seconds: TimeInterval) { state.withLock { $0.skew = seconds } }
    /// Turns session binding on (proofs checked and enforced, as `session_binding: optional`).
    func bindSessions(requiringNonce nonce: String? = nil) {
        state.withLock {
            $0.binding = true
            $0.requiredNonce = nonce
        }
    }
    var acceptedProofs: [DPoPProof] { state.withLock { $0.proofs } }
    var nonceChallenges: Int { state.withLock { $0.nonceChallenges } }

    /// Ends a session the way the server would (revoke takes its devices).
    func end(token: String, code: String) {
        state.withLock { state in
            state.sessions[token]?.endCode = code
            if let id = state.sessions[token]?.id { state.devices = state.devices.filter { $0.value.sessionID != id } }
        }
    }

    func session(token: String) -> SessionRecord? { state.withLock { $0.sessions[token] } }
    var devices: [DeviceRecord] { state.withLock { Array($0.devices.values) } }
    var liveSessions: [SessionRecord] { state.withLock { $0.sessions.values.filter { $0.endCode == nil } } }

    var transport: ScriptedTransport {
        ScriptedTransport { [self] request in self.handle(request) }
    }

    func handle(_ request: URLRequest) -> Outcome? {
        let endpoint = "\(request.httpMethod ?? "GET") \(request.url?.path ?? "")"
        let scripted = state.withLock { state -> (held: Bool, outcome: Outcome?) in
            if state.held.contains(endpoint) { return (true, nil) }
            if var queue = state.scripted[endpoint], !queue.isEmpty {
                let outcome = queue.removeFirst()
                state.scripted[endpoint] = queue
                return (false, outcome)
            }
            return (false, nil)
        }
        if scripted.held { return nil }
        if let outcome = scripted.outcome { return outcome }
        var reply = reply(to: request)
        if state.withLock({ $0.binding }) {
            // As Hummingbird does: every answer says the server's time (whole seconds).
            reply.headers["Date"] = Self.httpDate(now)
        }
        return .reply(reply)
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    // MARK: The endpoints

    func reply(to request: URLRequest) -> Reply {
        let method = request.httpMethod ?? "GET"
        let path = request.url?.path ?? ""
        let authorization = request.value(forHTTPHeaderField: "Authorization") ?? ""
        let bearer = authorization.split(separator: " ", maxSplits: 1).last.map(String.init) ?? ""
        let dpopScheme = authorization.lowercased().hasPrefix("dpop ")
        let body =
            request.httpBody.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        let now = self.now
        return state.withLock { state in
            // Proofs of possession, as the server checks them: a proof sent is checked whole, a bound
            // session needs the DPoP scheme and its key's proof.
            var proof: DPoPProof?
            if state.binding, let header = request.value(forHTTPHeaderField: "DPoP") {
                let required = state.requiredNonce
                do {
                    proof = try DPoPProofVerifier().verify(
                        header, method: method, url: "https://tessera.test" + path, accessToken: bearer, now: now,
                        nonce: required.map { nonce in { $0 == nonce } })
                } catch {
                    guard (error as? TokenError)?.code == .useDPoPNonce, let required else {
                        return .error(401, "dpop_proof_invalid")
                    }
                    state.nonceChallenges += 1
                    return .error(401, "use_dpop_nonce", headers: ["DPoP-Nonce": required])
                }
                state.proofs.append(proof!)
            }
            if state.binding, let record = state.sessions[bearer] ?? Self.sessionOfJWT(bearer, state: state, now: now),
                let jkt = record.jkt
            {
                guard dpopScheme, let proof else { return .error(401, "dpop_proof_required") }
                guard proof.thumbprint == jkt else { return .error(401, "dpop_key_mismatch") }
            }
            let binding = proof.map { (jkt: $0.thumbprint, tier: body["key_tier"] as? String) }
            switch (method, path) {
            case ("POST", "/v1/sessions/anonymous"):
                guard bearer == Self.publishableKey else { return .error(401, "invalid_api_key") }
                guard let installation = body["installation_id"] as? String,
                    let secret = body["installation_secret"] as? String
                else { return .error(400, "invalid_request") }
                if let known = state.installations[installation], known.secret != secret {
                    return .error(409, "installation_conflict")
                }
                if let refusal = Self.gateAppAttest(
                    body, endpoint: "anonymous", installationID: installation, &state)
                {
                    return refusal
                }
                var status = 200
                if state.installations[installation] == nil {
                    let profile = Self.newID("usr", &state)
                    state.profiles[profile] = ProfileRecord(id: profile, externalID: nil, verified: false)
                    state.installations[installation] = (secret, profile)
                    status = 201
                }
                let record = Self.openSession(
                    profileID: state.installations[installation]!.profileID, kind: "anonymous",
                    installation: installation, now: now, binding: binding, &state)
                return .json(status, Self.envelope(record, state: state, now: now))

            case ("POST", "/v1/sessions/identify"):
                var caller: SessionRecord?
                if bearer != Self.publishableKey {
                    switch Self.liveSession(bearer, state: state, now: now) {
                    case .failure(let reply): return reply
                    case .success(let record): caller = record
                    }
                }
                if let refusal = Self.gateAppAttest(
                    body, endpoint: "identify", installationID: caller?.installationID, &state)
                {
                    return refusal
                }
                let subject: String
                let kind: String
                if let token = body["identity_token"] as? String {
                    guard let claims = Self.fakeClaims(token) else { return .error(401, "invalid_identity_token") }
                    if let failure = claims["fail"] as? String { return .error(401, failure) }
                    subject = claims["sub"] as? String ?? ""
                    kind = "verified"
                } else if let userID = body["user_id"] as? String {
                    subject = userID
                    kind = "unverified"
                } else {
                    return .error(400, "invalid_request")
                }
                var merge: [String: Any]?
                let existing = state.profiles.values.first { $0.externalID == subject }
                var profileID: String
                if let caller {
                    let callerProfile = state.profiles[caller.profileID]!
                    if let external = callerProfile.externalID {
                        guard external == subject else { return .error(409, "external_user_id_changed") }
                        profileID = callerProfile.id
                        merge = ["outcome": "unchanged", "from_profile_id": callerProfile.id]
                    } else if let existing {
                        profileID = existing.id
                        merge = ["outcome": "merged", "from_profile_id": callerProfile.id]
                    } else {
                        profileID = callerProfile.id
                        state.profiles[profileID]?.externalID = subject
                        merge = ["outcome": "promoted", "from_profile_id": callerProfile.id]
                    }
                    state.sessions[caller.token]?.endCode = "session_revoked"
                    state.devices = state.devices.filter { $0.value.sessionID != caller.id }
                } else if let existing {
                    profileID = existing.id
                } else {
                    profileID = Self.newID("usr", &state)
                    state.profiles[profileID] = ProfileRecord(id: profileID, externalID: subject, verified: false)
                }
                if kind == "verified" { state.profiles[profileID]?.verified = true }
                let record = Self.openSession(
                    profileID: profileID, kind: kind, installation: caller?.installationID, now: now, binding: binding,
                    &state)
                var envelope = Self.envelope(record, state: state, now: now)
                if let merge { envelope["merge"] = merge }
                return .json(200, envelope)

            case ("POST", "/v1/attestations/challenge"):
                guard bearer == Self.publishableKey else { return .error(401, "invalid_api_key") }
                return Self.challenge(&state)

            case ("POST", "/v1/sessions/authenticate"):
                switch Self.liveSession(bearer, state: state, now: now) {
                case .failure(let reply): return reply
                case .success(var record):
                    if let minutes = body["session_duration_minutes"] as? Int {
                        record.expiresAt = max(record.expiresAt, now.addingTimeInterval(Double(minutes) * 60))
                        state.sessions[record.token] = record
                    }
                    return .json(200, Self.envelope(record, state: state, now: now))
                }

            case ("POST", "/v1/sessions/revoke"):
                switch Self.liveSession(bearer, state: state, now: now) {
                case .failure(let reply): return reply
                case .success(let record):
                    state.sessions[record.token]?.endCode = "session_revoked"
                    state.devices = state.devices.filter { $0.value.sessionID != record.id }
                    return .noContent
                }

            case ("GET", "/v1/sessions"):
                switch Self.liveSession(bearer, state: state, now: now) {
                case .failure(let reply): return reply
                case .success(let record):
                    let live = state.sessions.values.filter { $0.profileID == record.profileID && $0.endCode == nil }
                    return .json(200, ["sessions": live.map { Self.sessionJSON($0) }])
                }

            case ("GET", "/v1/me"):
                switch Self.customer(bearer, state: state, now: now) {
                case .failure(let reply): return reply
                case .success(let record):
                    return .json(
                        200,
                        [
                            "profile": Self.profileJSON(state.profiles[record.profileID]!),
                            "capabilities": Self.capabilitiesJSON(record.kind),
                        ])
                }

            case ("POST", "/v1/devices"):
                switch Self.customer(bearer, state: state, now: now) {
                case .failure(let reply): return reply
                case .success(let record):
                    guard let token = body["token"] as? String else { return .error(400, "invalid_request") }
                    state.devices = state.devices.filter { $0.value.token != token }
                    let id = Self.newID("dev", &state)
                    state.devices[id] = DeviceRecord(id: id, sessionID: record.id, token: token)
                    return .json(
                        201,
                        [
                            "device": [
                                "id": id, "platform": body["platform"] ?? "apns",
                                "environment": body["environment"] ?? "production", "session_id": record.id,
                                "created_at": WireCoding.formatDate(now),
                            ]
                        ])
                }

            case ("DELETE", _) where path.hasPrefix("/v1/devices/"):
                switch Self.customer(bearer, state: state, now: now) {
                case .failure(let reply): return reply
                case .success(let record):
                    let id = String(path.dropFirst("/v1/devices/".count))
                    guard let device = state.devices[id],
                        state.sessions.values.first(where: { $0.id == device.sessionID })?.profileID == record.profileID
                    else { return .error(404, "not_found") }
                    state.devices[id] = nil
                    return .noContent
                }

            default:
                return .error(404, "not_found")
            }
        }
    }

    /// Opens a verified session for `sub` the way an app's backend would (identify with the publishable
    /// key) and answers its session token.
    func mintSession(sub: String) -> String {
        var request = URLRequest(url: URL(string: "https://tessera.test/v1/sessions/identify")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(Self.publishableKey)", forHTTPHeaderField: "Authorization")
        request.httpBody = try! JSONSerialization.data(withJSONObject: ["identity_token": Self.identityToken(sub: sub)])
        let reply = reply(to: request)
        let json = try! JSONSerialization.jsonObject(with: reply.body) as! [String: Any]
        return json["session_token"] as! String
    }

    // MARK: Helpers

    /// A fake identity token: `x.<base64url JSON claims>.x` (the fake server reads `sub` and `fail`).
    static func identityToken(sub: String, fail: String? = nil) -> String {
        var claims: [String: Any] = ["sub": sub]
        if let fail { claims["fail"] = fail }
        let payload = try! JSONSerialization.data(withJSONObject: claims)
        return "eyJhbGciOiJIUzI1NiJ9.\(Base64URL.encode(payload)).c2ln"
    }

    static func fakeClaims(_ token: String) -> [String: Any]? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    private static func newID(_ prefix: String, _ state: inout State) -> String {
        state.counter += 1
        return "\(prefix)_\(state.counter)"
    }

    private static func openSession(
        profileID: String, kind: String, installation: String?, now: Date,
        binding: (jkt: String, tier: String?)? = nil, _ state: inout State
    ) -> SessionRecord {
        let id = newID("ses", &state)
        let record = SessionRecord(
            id: id, token: "st_\(id)_\(UUID().uuidString)", profileID: profileID, kind: kind,
            installationID: installation, createdAt: now, expiresAt: now.addingTimeInterval(30 * 86400), endCode: nil,
            jkt: binding?.jkt, keyTier: binding?.tier)
        state.sessions[record.token] = record
        return record
    }

    enum Lookup {
        case success(SessionRecord)
        case failure(Reply)
    }

    private static func liveSession(_ token: String, state: State, now: Date) -> Lookup {
        guard token.hasPrefix("st_") else { return .failure(.error(401, "invalid_credentials")) }
        guard let record = state.sessions[token] else { return .failure(.error(401, "session_not_found")) }
        if let code = record.endCode { return .failure(.error(401, code)) }
        if record.expiresAt <= now { return .failure(.error(401, "session_expired")) }
        return .success(record)
    }

    /// The session a session JWT names, whatever its state.
    private static func sessionOfJWT(_ credential: String, state: State, now: Date) -> SessionRecord? {
        guard !credential.hasPrefix("st_"), let claims = try? keyRing.verify(credential, now: now, leeway: 0)
        else { return nil }
        return state.sessions.values.first { $0.id == claims.sessionID }
    }

    /// The customer token: a session token or a live, unexpired session JWT.
    private static func customer(_ credential: String, state: State, now: Date) -> Lookup {
        if credential.hasPrefix("st_") { return liveSession(credential, state: state, now: now) }
        guard let claims = try? keyRing.verify(credential, now: now, leeway: 0) else {
            return .failure(.error(401, "invalid_credentials"))
        }
        guard let record = state.sessions.values.first(where: { $0.id == claims.sessionID }) else {
            return .failure(.error(401, "session_not_found"))
        }
        return liveSession(record.token, state: state, now: now)
    }

    static func envelope(_ record: SessionRecord, state: State, now: Date) -> [String: Any] {
        let profile = state.profiles[record.profileID]!
        let jwt = keyRing.sign(
            SessionClaims(
                issuer: "http://fake", audience: "prj_test", subject: record.profileID, sessionID: record.id,
                expiration: now.addingTimeInterval(300), issuedAt: now, notBefore: now, kind: record.kind,
                externalID: profile.externalID))
        return [
            "session": sessionJSON(record), "session_token": record.token, "session_jwt": jwt,
            "profile": profileJSON(profile), "capabilities": capabilitiesJSON(record.kind),
            "server_time": WireCoding.formatDate(now),
        ]
    }

    static func sessionJSON(_ record: SessionRecord) -> [String: Any] {
        [
            "id": record.id, "profile_id": record.profileID, "installation_id": orNull(record.installationID),
            "created_at": WireCoding.formatDate(record.createdAt),
            "last_authenticated_at": WireCoding.formatDate(record.createdAt),
            "expires_at": WireCoding.formatDate(record.expiresAt),
            "binding": record.jkt.map { ["jkt": $0, "key_tier": orNull(record.keyTier)] as Any } ?? NSNull(),
        ]
    }

    static func profileJSON(_ profile: ProfileRecord) -> [String: Any] {
        [
            "id": profile.id, "kind": profile.externalID == nil ? "anonymous" : "identified",
            "external_id": orNull(profile.externalID), "verified": profile.verified, "name": NSNull(),
            "avatar_url": NSNull(), "email": NSNull(), "created_at": "2026-11-20T12:00:00Z",
            "updated_at": "2026-11-20T12:00:00Z",
        ]
    }

    static func orNull(_ value: String?) -> Any { value.map { $0 as Any } ?? NSNull() }

    static func capabilitiesJSON(_ kind: String) -> [String: Any] {
        ["authenticated": kind == "verified", "kind": kind]
    }
}
