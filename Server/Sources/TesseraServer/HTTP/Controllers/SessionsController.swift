import Foundation
import Hummingbird
import TesseraTokens

private struct AnonymousBody: RequestBody {
    static let readMembers: Set<String>? = Set(CodingKeys.allCases.map(\.rawValue))

    var installationID: String
    var installationSecret: String
    var sessionDurationMinutes: Int64?
    var keyTier: String?
    var attestation: AppAttestBody?
    var assertion: AppAttestBody?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case installationID = "installation_id"
        case installationSecret = "installation_secret"
        case sessionDurationMinutes = "session_duration_minutes"
        case keyTier = "key_tier"
        case attestation
        case assertion
    }
}

private struct IdentifyBody: RequestBody {
    /// The identity token is judged by its verifier, which refuses any byte outside base64url and dots
    /// as `401 invalid_identity_token`, as the contract says of malformed tokens.
    static let readMembers: Set<String>? = [
        "user_id", "session_duration_minutes", "key_tier", "attestation", "assertion",
    ]

    var identityToken: String?
    var userID: String?
    var sessionDurationMinutes: Int64?
    var keyTier: String?
    /// A new key of the caller's installation, or `{"unsupported": true}`.
    var attestation: AppAttestBody?
    var assertion: AppAttestBody?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case identityToken = "identity_token"
        case userID = "user_id"
        case sessionDurationMinutes = "session_duration_minutes"
        case keyTier = "key_tier"
        case attestation
        case assertion
    }
}

private struct DurationBody: RequestBody {
    static let readMembers: Set<String>? = Set(CodingKeys.allCases.map(\.rawValue))

    var sessionDurationMinutes: Int64?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case sessionDurationMinutes = "session_duration_minutes"
    }
}

/// `/v1/sessions`: start, identify, authenticate, revoke, list and end sessions. Each method reads its
/// request, calls ``SessionActions`` and writes the answer.
struct SessionsController: Sendable {
    let core: TesseraCore
    let bodies: BodyReader
    let addresses: ClientAddressReader

    private var actions: SessionActions { SessionActions(core: core) }

    /// `POST /v1/sessions/anonymous`
    func startAnonymous(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let body = try await bodies.decode(AnonymousBody.self, from: request)
        let input = AnonymousStartInput(
            installationID: body.installationID, installationSecret: body.installationSecret,
            sessionDurationMinutes: body.sessionDurationMinutes, keyTier: body.keyTier,
            userAgent: request.headers[.userAgent],
            evidence: Result { () throws(CoreError) in
                try AppAttestBody.evidence(attestation: body.attestation, assertion: body.assertion)
            })
        let grant = try await actions.startAnonymous(
            runtime: runtime, input: input, proof: context.dpopProof,
            clientAddress: addresses.key(request, context: context), now: core.currentTime().date)
        return envelope(grant.createdInstallation ? .created : .ok, grant, runtime: runtime)
    }

    /// `POST /v1/sessions/identify`
    func identify(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        // Read after the rate limits' check: a blocked client is refused before its body is read.
        let input: Result<IdentifyInput, any Error>
        do {
            let body = try await bodies.decode(IdentifyBody.self, from: request)
            input = .success(
                IdentifyInput(
                    identityToken: body.identityToken, userID: body.userID,
                    sessionDurationMinutes: body.sessionDurationMinutes, keyTier: body.keyTier,
                    userAgent: request.headers[.userAgent],
                    evidence: Result { () throws(CoreError) in
                        try AppAttestBody.evidence(attestation: body.attestation, assertion: body.assertion)
                    }))
        } catch {
            input = .failure(error)
        }
        let grant = try await actions.identify(
            runtime: runtime, caller: context.caller, input: input, proof: context.dpopProof,
            clientAddress: addresses.key(request, context: context), now: core.currentTime().date)
        return envelope(.ok, grant, runtime: runtime)
    }

    /// `POST /v1/attestations/challenge`: a single-use App Attest challenge, valid five minutes.
    func attestationChallenge(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let issued = try await actions.attestationChallenge(
            runtime: try context.project(), clientAddress: addresses.key(request, context: context),
            now: core.currentTime().date)
        return .json { writer in
            writer.objectStart()
            writer.field("challenge", issued.challenge)
            writer.time("expires_at", issued.expiresAt)
            writer.objectEnd()
        }
    }

    /// `POST /v1/sessions/authenticate`: the heartbeat (``HeartbeatAction``).
    func authenticate(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let caller = try context.session()
        // The heartbeat has no body: nothing to decode, nothing to await. Answered here, in a frame with
        // nothing held across a suspension, it leaves its task's frames inside the first allocation slab.
        guard BodyReader.mayHaveBody(request) else {
            let now = core.currentTime().seconds
            let session = HeartbeatAction.check(
                core, caller: caller, clientAddress: addresses.key(request, context: context),
                userAgent: request.headers[.userAgent], now: now)
            return envelope(
                .ok, context: session, token: caller.sessionToken, runtime: caller.runtime, now: now,
                shareSecond: true)
        }
        return try await extend(request, caller: caller, proof: context.dpopProof)
    }

    /// `POST /v1/sessions/authenticate` with a body: a heartbeat that may extend the session.
    private func extend(_ request: Request, caller: Caller, proof: DPoPProof?) async throws -> Response {
        var buffer = try await bodies.body(of: request)
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        let body = bytes.isEmpty ? nil : try RequestJSON.decode(DurationBody.self, from: bytes)
        let grant = try await actions.extend(
            caller: caller, requestedMinutes: body?.sessionDurationMinutes, body: bytes, proof: proof,
            now: core.currentTime().date)
        return envelope(.ok, grant, runtime: caller.runtime, shareSecond: true)
    }

    /// `POST /v1/sessions/revoke`
    func revoke(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        try await actions.signOut(
            caller: try context.session(), clientAddress: addresses.key(request, context: context),
            now: core.currentTime().date)
        return .noContent
    }

    /// `POST /v1/sessions/revoke-others`: ends every other live session of the caller's profile and
    /// answers how many (`{ended}`).
    func revokeOthers(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let ended = try await actions.revokeOthers(
            caller: try context.session(), clientAddress: addresses.key(request, context: context),
            now: core.currentTime().date)
        return .json { writer in
            writer.objectStart()
            writer.field("ended", Int64(ended))
            writer.objectEnd()
        }
    }

    /// `GET /v1/sessions`
    func listSessions(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let sessions = try await actions.sessions(caller: try context.session(), now: core.currentTime().date)
        return .json { $0.sessions(sessions) }
    }

    /// `DELETE /v1/sessions/{session_id}`
    func deleteSession(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let sessionID = try context.parameters.require("session_id")
        try await actions.deleteSession(
            sessionID, caller: try context.session(), clientAddress: addresses.key(request, context: context),
            now: core.currentTime().date)
        return .noContent
    }
}
