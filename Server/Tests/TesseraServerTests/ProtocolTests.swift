import Foundation
import HTTPTypes
import HummingbirdTesting
import TesseraTokens
import Testing

@testable import TesseraServer

@Suite("Protocol: credentials, errors, limits, headers")
struct ProtocolTests {
    @Test("Every response carries X-Request-Id, and a plain client-supplied one is echoed")
    func requestID() async throws {
        try await TestEnvironment.withApp { environment, client in
            let generated = try await client.send(.get, "/health")
            #expect(generated.status == .ok)
            #expect(generated.headers[.xRequestID]?.isEmpty == false)
            let echoed = try await client.send(.get, "/nope", headers: [.xRequestID: "abc-123"])
            #expect(echoed.headers[.xRequestID] == "abc-123")
            let unsafe = try await client.send(.get, "/health", headers: [.xRequestID: "bad id\twith tab"])
            #expect(unsafe.headers[.xRequestID] != "bad id\twith tab")
        }
    }

    @Test("Unknown routes are 404 not_found, wrong methods 405 with Allow, both in the error shape")
    func notFoundAndMethodNotAllowed() async throws {
        try await TestEnvironment.withApp { environment, client in
            let missing = try await client.send(.get, "/v1/nothing")
            #expect(missing.status == .notFound)
            #expect(missing.errorCode == "not_found")
            #expect(missing.headers[.contentType]?.hasPrefix("application/json") == true)
            let wrongMethod = try await client.send(.get, "/v1/sessions/anonymous")
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(wrongMethod.errorCode == "method_not_allowed")
            #expect(wrongMethod.headers[.allow]?.contains("POST") == true)
            #expect(wrongMethod.headers[.allow]?.contains("GET") == false)
            let patchMe = try await client.admin(.put, "/v1/admin/project")
            #expect(patchMe.status == .methodNotAllowed)
            #expect(patchMe.headers[.allow]?.contains("PATCH") == true)
        }
    }

    @Test("Missing, malformed and wrong-kind credentials are 401 invalid_credentials")
    func credentialKinds() async throws {
        try await TestEnvironment.withApp { environment, client in
            let anonymous = try await client.anonymous()
            let token = try #require(anonymous.sessionToken)
            #expect(try await client.send(.get, "/v1/me").errorCode == "invalid_credentials")
            #expect(
                try await client.send(.get, "/v1/me", bearer: client.publishableKey).errorCode == "invalid_credentials")
            #expect(try await client.admin(.get, "/v1/me").errorCode == "invalid_credentials")
            #expect(try await client.send(.get, "/v1/admin/project", bearer: token).errorCode == "invalid_credentials")
            #expect(
                try await client.send(.get, "/v1/admin/project", bearer: client.publishableKey).errorCode
                    == "invalid_credentials")
            let identityToken = environment.identityToken(sub: "user-1")
            let withIdentity = try await client.send(.get, "/v1/me", bearer: identityToken)
            #expect(withIdentity.status == .unauthorized)
            #expect(withIdentity.errorCode == "invalid_credentials")
            #expect(
                try await client.send(.post, "/v1/sessions/anonymous", bearer: token, body: "{}").errorCode
                    == "invalid_credentials")
            let basic = try await client.send(.get, "/v1/me", headers: [.authorization: "Basic \(token)"])
            #expect(basic.errorCode == "invalid_credentials")
            let garbage = try await client.send(.get, "/v1/me", bearer: "nonsense")
            #expect(garbage.errorCode == "invalid_credentials")
        }
    }

    @Test("The Bearer scheme word is case-insensitive; a credential in the query string is ignored")
    func bearerCaseAndQueryString() async throws {
        try await TestEnvironment.withApp { environment, client in
            let token = try #require(try await client.anonymous().sessionToken)
            for scheme in ["bearer", "BEARER", "BeArEr"] {
                let reply = try await client.send(.get, "/v1/me", headers: [.authorization: "\(scheme) \(token)"])
                #expect(reply.status == .ok)
            }
            let query = try await client.send(.get, "/v1/me?access_token=\(token)&session_token=\(token)")
            #expect(query.status == .unauthorized)
            #expect(query.errorCode == "invalid_credentials")
        }
    }

    @Test("Unknown publishable and secret keys are 401 invalid_api_key")
    func unknownKeys() async throws {
        try await TestEnvironment.withApp { environment, client in
            let reply = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: OpaqueToken.publishableKey(), body: "{}")
            #expect(reply.status == .unauthorized)
            #expect(reply.errorCode == "invalid_api_key")
            let admin = try await client.send(.get, "/v1/admin/project", bearer: OpaqueToken.secretKey())
            #expect(admin.errorCode == "invalid_api_key")
        }
    }

    @Test("An unknown session token is 401 session_not_found")
    func unknownSessionToken() async throws {
        try await TestEnvironment.withApp { environment, client in
            let reply = try await client.send(.get, "/v1/me", bearer: OpaqueToken.sessionToken())
            #expect(reply.status == .unauthorized)
            #expect(reply.errorCode == "session_not_found")
        }
    }

    @Test(
        "Malformed JSON and wrong types are 400 invalid_request",
        arguments: [
            "{", "[]", "null", "\"text\"", "{\"installation_id\": 5}", "{\"installation_id\":\"x\"}",
            "{\"installation_id\":null,\"installation_secret\":null}", "{,}", "{\"a\":1,}",
        ])
    func malformedBodies(body: String) async throws {
        try await TestEnvironment.withApp { environment, client in
            let reply = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey, body: body)
            #expect(reply.status == .badRequest)
            #expect(reply.errorCode == "invalid_request")
        }
    }

    @Test("Bodies over 16 KiB are 413 payload_too_large")
    func bodyLimit() async throws {
        try await TestEnvironment.withApp { environment, client in
            let padding = String(repeating: "a", count: 17 * 1024)
            let reply = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey, body: #"{"pad":"\#(padding)"}"#)
            #expect(reply.status == .contentTooLarge)
            #expect(reply.errorCode == "payload_too_large")
            let fits = String(repeating: "a", count: 15 * 1024)
            let small = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey, body: #"{"pad":"\#(fits)"}"#)
            #expect(small.status == .badRequest)
        }
    }

    @Test("GET /health answers 200 and GET /openapi.json the document")
    func operations() async throws {
        try await TestEnvironment.withApp { environment, client in
            let health = try await client.send(.get, "/health")
            #expect(health.status == .ok)
            #expect(health.json["status"] as? String == "ok")
            let openAPI = try await client.send(.get, "/openapi.json")
            #expect(openAPI.status == .ok)
            #expect(openAPI.json["openapi"] != nil)
        }
    }

    @Test("GET /metrics counts requests by route and status, sessions and verification failures")
    func metrics() async throws {
        try await TestEnvironment.withApp { environment, client in
            _ = try await client.anonymous()
            _ = try await client.identify(token: "not.a.token")
            let metrics = try await client.send(.get, "/metrics")
            #expect(metrics.status == .ok)
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains("tessera_http_requests_total"))
            #expect(text.contains(#"route="/v1/sessions/anonymous""#))
            #expect(text.contains(#"status="201""#))
            #expect(text.contains("tessera_http_request_duration_seconds"))
            #expect(text.contains(#"tessera_sessions_created_total{kind="anonymous"} 1"#))
            #expect(text.contains("tessera_token_verification_failures_total"))
        }
    }

    @Test("GET /metrics counts the events written, by type, each once across scrapes; none for a refused change")
    func eventMetrics() async throws {
        try await TestEnvironment.withApp { environment, client in
            let installationID = UUID().uuidString.lowercased()
            let secret = OpaqueToken.installationSecret()
            _ = try await client.anonymous(installationID: installationID, secret: secret)
            #expect(try await client.anonymous(installationID: installationID).status == .conflict)
            func text() async throws -> String {
                String(decoding: try await client.send(.get, "/metrics").body, as: UTF8.self)
            }
            let first = try await text()
            #expect(first.contains(#"tessera_events_written_total{type="profile.created"} 1"#))
            #expect(first.contains(#"tessera_events_written_total{type="session.created"} 1"#))
            _ = try await client.anonymous(installationID: installationID, secret: secret)
            let second = try await text()
            #expect(second.contains(#"tessera_events_written_total{type="profile.created"} 1"#))
            #expect(second.contains(#"tessera_events_written_total{type="session.created"} 2"#))
            #expect(try await text().contains(#"tessera_events_written_total{type="session.created"} 2"#))
        }
    }

    @Test("Responses use RFC 3339 UTC second-precision times and server_time")
    func timeFormat() async throws {
        try await TestEnvironment.withApp { environment, client in
            let reply = try await client.anonymous()
            let serverTime = try #require(reply.json["server_time"] as? String)
            #expect(serverTime == "2026-11-18T11:06:40Z")
            let created = try #require(reply["session"]["created_at"] as? String)
            #expect(created == serverTime)
        }
    }
}
