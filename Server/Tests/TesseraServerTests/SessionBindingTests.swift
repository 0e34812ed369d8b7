import Crypto
import Foundation
import HTTPTypes
import TesseraTokens
import Testing

@testable import TesseraServer

/// Sessions bound to a device key (RFC 9449 proofs): binding at anonymous start and identify, the
/// proof every later request of a bound session must carry, single-use `jti`s, nonces, settings.
@Suite("Sessions bound to a device key (DPoP)")
struct SessionBindingTests {
    /// A device: its key, and requests made with proofs of it.
    struct Device: Sendable {
        let client: APIClient
        let key = P256.Signing.PrivateKey()
        var jkt: String { JWKThumbprint.sha256(of: key.publicKey) }

        func proof(
            _ method: HTTPRequest.Method, _ path: String, credential: String?, nonce: String? = nil,
            iatOffset: Double = 0, signer: P256.Signing.PrivateKey? = nil, body: String? = nil
        ) throws -> String {
            try DPoPProofBuilder.proof(
                signer: signer ?? key, method: method.rawValue, url: "https://tessera.test" + path,
                accessToken: credential, nonce: nonce,
                now: client.environment.clock.now.addingTimeInterval(iatOffset), body: body.map { Array($0.utf8) })
        }

        /// A request with `Authorization: <scheme> credential` and a proof (`proof` replaces the fresh one).
        @discardableResult
        func send(
            _ method: HTTPRequest.Method, _ path: String, credential: String?, scheme: String = "DPoP",
            body: String? = nil, proof: String? = nil, withProof: Bool = true, nonce: String? = nil
        ) async throws -> Reply {
            var headers: HTTPFields = [:]
            if let credential { headers[.authorization] = "\(scheme) \(credential)" }
            if withProof {
                headers[.dpop] = try proof ?? self.proof(method, path, credential: credential, nonce: nonce, body: body)
            }
            return try await client.send(method, path, body: body, headers: headers)
        }

        func start(installationID: String = UUID().uuidString.lowercased(), nonce: String? = nil) async throws
            -> Reply
        {
            try await send(
                .post, "/v1/sessions/anonymous", credential: client.publishableKey, scheme: "Bearer",
                body:
                    #"{"installation_id":"\#(installationID)","installation_secret":"\#(OpaqueToken.installationSecret())"}"#,
                nonce: nonce)
        }
    }

    @Test(
        "An anonymous start with a proof binds the session: binding.jkt and the JWT's cnf.jkt",
        arguments: [false, true])
    func bindsAtStart(jwt: Bool) async throws {
        try await TestEnvironment.withApp { environment, client in
            let device = Device(client: client)
            let started = try await device.start()
            #expect(started.status == .created)
            #expect((started["session"]["binding"] as? [String: Any])?["jkt"] as? String == device.jkt)
            let claims = try SessionClaims.unverified(from: try #require(started.sessionJWT))
            #expect(claims.confirmation == device.jkt)
            let credential = try #require(jwt ? started.sessionJWT : started.sessionToken)
            // With the key's proof: every session endpoint answers.
            #expect(try await device.send(.post, "/v1/sessions/authenticate", credential: credential).status == .ok)
            #expect(try await device.send(.get, "/v1/me", credential: credential).status == .ok)
            #expect(try await device.send(.get, "/v1/sessions", credential: credential).status == .ok)
            // Without it, a captured credential is worth nothing.
            let bearer = try await client.send(.post, "/v1/sessions/authenticate", bearer: credential)
            #expect(bearer.status == .unauthorized && bearer.errorCode == "dpop_proof_required")
            #expect(bearer.headers[.wwwAuthenticate]?.hasPrefix("DPoP ") == true)
            let noProof = try await device.send(.get, "/v1/me", credential: credential, withProof: false)
            #expect(noProof.errorCode == "dpop_proof_required")
            let bearerWithProof = try await device.send(.get, "/v1/me", credential: credential, scheme: "Bearer")
            #expect(
                bearerWithProof.errorCode == "dpop_proof_required", "the Bearer scheme is refused for a bound session")
            let thief = Device(client: client)
            let stolen = try await thief.send(.get, "/v1/me", credential: credential)
            #expect(stolen.status == .unauthorized && stolen.errorCode == "dpop_key_mismatch")
            let unbound = try await client.send(.get, "/v1/me", bearer: started.sessionToken)
            #expect(unbound.errorCode == "dpop_proof_required")
        }
    }

    @Test("Each claim of a proof is checked: method, URL, credential hash, age")
    func proofClaims() async throws {
        try await TestEnvironment.withApp { environment, client in
            let device = Device(client: client)
            let token = try #require(try await device.start().sessionToken)
            func refused(_ proof: String) async throws -> String? {
                try await device.send(.get, "/v1/me", credential: token, proof: proof).errorCode
            }
            #expect(try await refused(try device.proof(.post, "/v1/me", credential: token)) == "dpop_proof_invalid")
            #expect(
                try await refused(try device.proof(.get, "/v1/sessions", credential: token)) == "dpop_proof_invalid")
            #expect(try await refused(try device.proof(.get, "/v1/me", credential: "st_other")) == "dpop_proof_invalid")
            #expect(try await refused(try device.proof(.get, "/v1/me", credential: nil)) == "dpop_proof_invalid")
            #expect(
                try await refused(try device.proof(.get, "/v1/me", credential: token, iatOffset: -61))
                    == "dpop_proof_invalid")
            #expect(
                try await refused(try device.proof(.get, "/v1/me", credential: token, iatOffset: 61))
                    == "dpop_proof_invalid")
            #expect(try await refused("garbage") == "dpop_proof_invalid")
            #expect(try await device.send(.get, "/v1/me", credential: token).status == .ok)
        }
    }

    @Test("A proof's jti is single-use where the call changes something; a heartbeat's may repeat")
    func replay() async throws {
        try await TestEnvironment.withApp { environment, client in
            let device = Device(client: client)
            let started = try await device.start()
            let token = try #require(started.sessionToken)
            // A heartbeat (token or JWT) writes nothing, and its proof may repeat in its window.
            let jwt = try #require(started.sessionJWT)
            for credential in [jwt, token] {
                let heartbeat = try device.proof(.post, "/v1/sessions/authenticate", credential: credential)
                for _ in 0..<2 {
                    #expect(
                        try await device.send(
                            .post, "/v1/sessions/authenticate", credential: credential, proof: heartbeat
                        ).status == .ok)
                }
            }
            let body = #"{"session_duration_minutes":60}"#
            let extend = try device.proof(.post, "/v1/sessions/authenticate", credential: token, body: body)
            #expect(
                try await device.send(.post, "/v1/sessions/authenticate", credential: token, body: body, proof: extend)
                    .status == .ok)
            let again = try await device.send(
                .post, "/v1/sessions/authenticate", credential: token, body: body, proof: extend)
            #expect(again.status == .unauthorized && again.errorCode == "dpop_proof_replayed")
            let register = try device.proof(.post, "/v1/devices", credential: token)
            let device1 = #"{"platform":"apns","token":"aa11"}"#
            #expect(
                try await device.send(.post, "/v1/devices", credential: token, body: device1, proof: register).status
                    == .created)
            let replayed = try await device.send(
                .post, "/v1/devices", credential: token, body: device1, proof: register)
            #expect(replayed.errorCode == "dpop_proof_replayed")
            #expect(try await device.send(.post, "/v1/sessions/revoke", credential: token).status == .noContent)
        }
    }

    /// Found by the replay harness (Server/Tests/replay/run.py): a heartbeat and an extension share
    /// method, URL and credential, so a heartbeat's proof, which the heartbeat does not spend, extended
    /// the session when a thief sent it again with a body. An extension's proof now names its body.
    @Test("A captured heartbeat proof sent again as an extension is refused and extends nothing")
    func heartbeatProofAsExtension() async throws {
        try await TestEnvironment.withApp { environment, client in
            let device = Device(client: client)
            let started = try await device.start()
            let token = try #require(started.sessionToken)
            let expiresAt = try #require(started["session"]["expires_at"] as? String)
            let captured = try device.proof(.post, "/v1/sessions/authenticate", credential: token)
            // The heartbeat writes nothing: its proof may repeat within its window, as a read's does.
            for _ in 0..<2 {
                #expect(
                    try await device.send(.post, "/v1/sessions/authenticate", credential: token, proof: captured)
                        .status == .ok)
            }
            let extend = #"{"session_duration_minutes":525600}"#
            let stolen = try await client.send(
                .post, "/v1/sessions/authenticate", body: extend,
                headers: [.authorization: "DPoP \(token)", .dpop: captured])
            #expect(stolen.status == .unauthorized && stolen.errorCode == "dpop_proof_invalid")
            // A proof naming another body does not extend either.
            let otherBody = try device.proof(
                .post, "/v1/sessions/authenticate", credential: token, body: #"{"session_duration_minutes":5}"#)
            let swapped = try await client.send(
                .post, "/v1/sessions/authenticate", body: extend,
                headers: [.authorization: "DPoP \(token)", .dpop: otherBody])
            #expect(swapped.errorCode == "dpop_proof_invalid")
            let after = try await device.send(.post, "/v1/sessions/authenticate", credential: token)
            #expect(after["session"]["expires_at"] as? String == expiresAt, "the session was not extended")
            // The device's own extension names its body and spends its proof (a minute later, so the
            // extension moves expires_at even at the project's maximum).
            environment.clock.advance(seconds: 60)
            let named = try device.proof(.post, "/v1/sessions/authenticate", credential: token, body: extend)
            let extended = try await device.send(
                .post, "/v1/sessions/authenticate", credential: token, body: extend, proof: named)
            #expect(extended.status == .ok && extended["session"]["expires_at"] as? String != expiresAt)
            let again = try await device.send(
                .post, "/v1/sessions/authenticate", credential: token, body: extend, proof: named)
            #expect(again.errorCode == "dpop_proof_replayed")
        }
    }

    @Test("A restore with a new key ends the installation's sessions bound to the old one (replaced)")
    func restoreWithNewKey() async throws {
        try await TestEnvironment.withApp { environment, client in
            let installation = UUID().uuidString.lowercased()
            let secret = OpaqueToken.installationSecret()
            let body = #"{"installation_id":"\#(installation)","installation_secret":"\#(secret)"}"#
            func start(_ device: Device?) async throws -> Reply {
                guard let device else {
                    return try await client.send(
                        .post, "/v1/sessions/anonymous", bearer: client.publishableKey, body: body)
                }
                return try await device.send(
                    .post, "/v1/sessions/anonymous", credential: client.publishableKey, scheme: "Bearer", body: body)
            }
            let old = Device(client: client)
            let first = try await start(old)
            let second = try await start(old)  // the same key again: nothing ends
            let unbound = try await start(nil)  // no proof: nothing ends either
            #expect([first.status, second.status, unbound.status] == [.created, .ok, .ok])
            let oldToken = try #require(first.sessionToken)
            #expect(try await old.send(.get, "/v1/me", credential: oldToken).status == .ok)
            #expect(try await old.send(.get, "/v1/me", credential: second.sessionToken).status == .ok)

            let new = Device(client: client)
            let restored = try await start(new)
            #expect(restored.status == .ok && restored.profileID == first.profileID)
            for ended in [first, second] {
                let reply = try await old.send(.get, "/v1/me", credential: ended.sessionToken)
                #expect(reply.errorCode == "session_revoked")
            }
            #expect(try await client.send(.get, "/v1/me", bearer: unbound.sessionToken).status == .ok)
            #expect(try await new.send(.get, "/v1/me", credential: restored.sessionToken).status == .ok)
            let events = try await client.admin(.get, "/v1/admin/events?type=session.ended")
            let replaced = (events.json["events"] as? [[String: Any]] ?? []).compactMap { $0["data"] as? [String: Any] }
                .filter { $0["reason"] as? String == "replaced" }.compactMap { $0["session_id"] as? String }
            #expect(Set(replaced) == Set([first.sessionID, second.sessionID].compactMap { $0 }))
        }
    }

    @Test("Identify from a bound session needs its key and binds the new session to it")
    func identifyFromBoundSession() async throws {
        try await TestEnvironment.withApp { environment, client in
            let device = Device(client: client)
            let token = try #require(try await device.start().sessionToken)
            let body = #"{"identity_token":"\#(environment.identityToken(sub: "ada"))"}"#
            let stolen = try await client.send(.post, "/v1/sessions/identify", bearer: token, body: body)
            #expect(stolen.errorCode == "dpop_proof_required")
            let identified = try await device.send(.post, "/v1/sessions/identify", credential: token, body: body)
            #expect(identified.status == .ok)
            #expect((identified["session"]["binding"] as? [String: Any])?["jkt"] as? String == device.jkt)
        }
    }

    @Test("session_binding: off ignores proofs, required refuses starts without one (400)")
    func settings() async throws {
        try await TestEnvironment.withApp { environment, client in
            let device = Device(client: client)
            #expect(
                try await client.admin(.patch, "/v1/admin/project", body: #"{"session_binding":"sometimes"}"#).status
                    == .badRequest)
            let project = try await client.admin(.patch, "/v1/admin/project", body: #"{"session_binding":"off"}"#)
            #expect((project["project"]["settings"] as? [String: Any])?["session_binding"] as? String == "off")
            let ignored = try await device.start()
            #expect(ignored["session"]["binding"] is NSNull)
            #expect(try await client.send(.get, "/v1/me", bearer: ignored.sessionToken).status == .ok)
            // A header longer than the contract's maxLength is bad input even when proofs are ignored.
            let oversized = String(repeating: "z", count: DPoPGate.maximumProofLength + 1)
            var headers: HTTPFields = [.authorization: "Bearer \(try #require(ignored.sessionToken))"]
            headers[.dpop] = oversized
            let tooLong = try await client.send(.get, "/v1/me", headers: headers)
            #expect(tooLong.status == .unauthorized && tooLong.errorCode == "dpop_proof_invalid")
            headers[.dpop] = String(oversized.dropFirst())
            #expect(try await client.send(.get, "/v1/me", headers: headers).status == .ok)
            try await client.admin(.patch, "/v1/admin/project", body: #"{"session_binding":"required"}"#)
            let refused = try await client.anonymous()
            #expect(refused.status == .badRequest && refused.errorCode == "dpop_proof_required")
            #expect(try await device.start().status == .created)
        }
    }

    @Test("dpop_nonce_required: use_dpop_nonce with a DPoP-Nonce every node accepts, then accepted")
    func nonces() async throws {
        try await TestEnvironment.withApp { environment, client in
            try await client.admin(.patch, "/v1/admin/project", body: #"{"dpop_nonce_required":true}"#)
            let device = Device(client: client)
            let first = try await device.start()
            #expect(first.status == .unauthorized && first.errorCode == "use_dpop_nonce")
            #expect(first.headers[.wwwAuthenticate]?.contains("use_dpop_nonce") == true)
            let nonce = try #require(first.headers[.dpopNonce])
            let started = try await device.start(nonce: nonce)
            #expect(started.status == .created)
            let token = try #require(started.sessionToken)
            #expect(try await device.send(.get, "/v1/me", credential: token, nonce: nonce).status == .ok)
            #expect(
                try await device.send(.get, "/v1/me", credential: token, nonce: "made-up").errorCode == "use_dpop_nonce"
            )
            // Another node, with the same master key, accepts it.
            let other = DPoPNonces(masterKeys: environment.store.masterKeys)
            #expect(other.accepts(nonce, projectID: environment.project.project.id, now: environment.clock.now))
            // Ten minutes later it has expired; a nonce of the next window is answered with a fresh one.
            #expect(!other.accepts(nonce, projectID: environment.project.project.id, now: environment.clock.now + 601))
        }
    }
}
