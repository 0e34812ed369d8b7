import Foundation
import HTTPTypes
import TesseraTokens
import Testing

@testable import TesseraServer

/// The request body reader: one reading per body, or a 400 in the API's error shape.
@Suite("Request bodies")
struct RequestBodyTests {
    @Test(
        "The strict reader refuses what JSONDecoder would read one way or another",
        arguments: [
            (#"{"a":1,"a":2}"#, StrictRequestJSON.Failure.duplicateMember("a")),
            (#"{"a":{"b":1,"b":1}}"#, .duplicateMember("b")),
            (#"{"\u0061":1,"a":2}"#, .duplicateMember("a")),
            (#"{"a":"\u0000"}"#, .controlCharacter),
            (#"{"a":"x\ny"}"#, .controlCharacter),
            (#"{"a":"\t"}"#, .controlCharacter),
            ("{\"a\":\"\u{7F}\"}", .controlCharacter),
            ("{\"a\":\"\u{85}\"}", .controlCharacter),
            (#"{"a":"\u009f"}"#, .controlCharacter),
            (#"{"a":"\ud800"}"#, .unpairedSurrogate),
            (#"{"a":"\udc00\ud800"}"#, .unpairedSurrogate),
            (#"{"a":"\ud800\u0041"}"#, .unpairedSurrogate),
            (#"{"a":1,}"#, .malformed),
            (#"{"a":01}"#, .malformed),
            (#"{"a":1} x"#, .malformed),
            (#"{"a":NaN}"#, .malformed),
            (String(repeating: "[", count: 40) + String(repeating: "]", count: 40), .tooDeep),
            // A name repeated after a nested object closed, and names with escapes against plain ones.
            (#"{"a":{"b":1},"c":2,"a":3}"#, .duplicateMember("a")),
            (#"{"x\"y":1,"x\u0022y":2}"#, .duplicateMember("x\"y")),
        ])
    func strictReader(body: String, failure: StrictRequestJSON.Failure) {
        #expect(throws: failure) { try StrictRequestJSON.validate(Array(body.utf8)) }
    }

    @Test("The strict reader accepts what is unambiguous")
    func strictReaderAccepts() throws {
        for body in [
            #"{}"#, #"{"a":[1,-2.5e3,true,false,null,"x\"\\\/"],"b":{"a":1}}"#,
            #"{"emoji":"\ud83d\ude00","é":"e\u0301"}"#, "{\"raw\":\"jos\u{E9} \u{1F600}\"}",
            // One name in sibling and nested objects: each object's names are its own.
            #"{"a":{"x":1,"y":{"x":2}},"b":{"x":1},"c":[{"x":1},{"x":1}],"x":0}"#,
            #"{"a\"b":1,"a\u0022c":2,"ab":3}"#,
        ] {
            try StrictRequestJSON.validate(Array(body.utf8))
        }
        // Members the server does not read are ignored, as the contract promises newer clients: their
        // strings are not judged; duplicate names are refused everywhere.
        let unread = #"{"a":"ok","extra":["\u0000","\ud800x",{"\t":"\u0085","\udc00":1}]}"#
        try StrictRequestJSON.validate(Array(unread.utf8), readMembers: ["a"])
        #expect(throws: StrictRequestJSON.Failure.controlCharacter) {
            try StrictRequestJSON.validate(Array(#"{"a":"\u0000","extra":1}"#.utf8), readMembers: ["a"])
        }
        #expect(throws: StrictRequestJSON.Failure.unpairedSurrogate) {
            try StrictRequestJSON.validate(Array(#"{"a":["\ud800"]}"#.utf8), readMembers: ["a"])
        }
        // Names are told apart by their unescaped bytes, whatever they hold.
        try StrictRequestJSON.validate(Array(#"{"\n":1,"\\n":2,"\ud800":3,"\\ud800":4}"#.utf8), readMembers: [])
        #expect(throws: StrictRequestJSON.Failure.duplicateMember("\n")) {
            try StrictRequestJSON.validate(Array(#"{"\n":1,"\u000a":2}"#.utf8), readMembers: [])
        }
        #expect(throws: StrictRequestJSON.Failure.duplicateMember("x")) {
            try StrictRequestJSON.validate(Array(#"{"a":"ok","extra":{"x":1,"x":2}}"#.utf8), readMembers: ["a"])
        }
        // Invalid UTF-8 in a string.
        #expect(throws: StrictRequestJSON.Failure.malformed) {
            try StrictRequestJSON.validate([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC0, 0xAF, 0x22, 0x7D])
        }
    }

    @Test(
        "Bad bodies are 400 invalid_request and change nothing",
        arguments: [
            #"{"platform":"apns","token":"one","token":"two"}"#,
            #"{"platform":"apns","token":"t\u0000"}"#,
            #"{"platform":"apns","token":"\ud800"}"#,
            #"{"platform":"apns","token":"ok","environment":"sandbox\u0085"}"#,
        ])
    func deviceBodies(body: String) async throws {
        try await TestEnvironment.withApp { environment, client in
            let session = try await client.identify(sub: "kim")
            let reply = try await client.send(.post, "/v1/devices", bearer: session.sessionToken, body: body)
            #expect(reply.status == .badRequest)
            #expect(reply.errorCode == "invalid_request")
            #expect(try await client.adminList("devices", of: session.profileID)?.isEmpty == true)
        }
    }

    @Test("Members the server does not read are ignored, whatever their strings hold")
    func unknownMembers() async throws {
        try await TestEnvironment.withApp { environment, client in
            let session = try await client.anonymous()
            let reply = try await client.send(
                .post, "/v1/devices", bearer: session.sessionToken,
                body: #"{"platform":"apns","token":"t1","future":{"note":"a\u0000b\ud800"}}"#)
            #expect(reply.status == .created)
        }
    }

    @Test(
        "Numbers out of range are 4xx for every numeric field, never a 5xx",
        arguments: [
            ("/v1/sessions/authenticate", #"{"session_duration_minutes":1e30}"#),
            ("/v1/sessions/authenticate", #"{"session_duration_minutes":9223372036854775808}"#),
            ("/v1/sessions/authenticate", #"{"session_duration_minutes":-9223372036854775809}"#),
            ("/v1/sessions/authenticate", #"{"session_duration_minutes":1.5}"#),
            ("/v1/sessions/authenticate", #"{"session_duration_minutes":-1}"#),
            ("/v1/sessions/authenticate", #"{"session_duration_minutes":1e400}"#),
            ("/v1/admin/project", #"{"leeway_seconds":1e400}"#),
            ("/v1/admin/project", #"{"leeway_seconds":-9223372036854775809}"#),
            ("/v1/admin/project", #"{"max_identity_token_lifetime_seconds":0}"#),
            ("/v1/admin/project", #"{"anonymous_session_minutes":525601}"#),
            ("/v1/admin/project", #"{"identified_session_minutes":4.5}"#),
            ("/v1/admin/project", #"{"rate_limits":{"anonymous_starts_per_minute":1000001}}"#),
            ("/v1/admin/project", #"{"rate_limits":{"failed_identifies_per_minute":0}}"#),
            ("/v1/admin/project", #"{"rate_limits":{"failed_identifies_per_minute":1e19}}"#),
            ("/v1/admin/project", #"{"leeway_seconds":60,"leeway_seconds":0}"#),
            ("/v1/admin/project", #"{"expected_issuer":"https://a\u0000"}"#),
        ])
    func numbers(path: String, body: String) async throws {
        try await TestEnvironment.withApp { environment, client in
            let session = try await client.anonymous()
            let bearer = path.hasPrefix("/v1/admin") ? client.secretKey : try #require(session.sessionToken)
            let method: HTTPRequest.Method = path.hasPrefix("/v1/admin") ? .patch : .post
            let before = try await client.admin(.get, "/v1/admin/project")
            let reply = try await client.send(method, path, bearer: bearer, body: body)
            #expect(reply.status == .badRequest)
            #expect(["invalid_request", "invalid_session_duration"].contains(reply.errorCode ?? ""))
            let after = try await client.admin(.get, "/v1/admin/project")
            #expect(after.body == before.body)
        }
    }

    @Test("Control characters and lone surrogates in identify and anonymous bodies are 400")
    func identifyBodies() async throws {
        try await TestEnvironment.withApp { environment, client in
            _ = try await client.allowUnverifiedIdentify()
            for body in [
                #"{"user_id":"bob\u0000"}"#, #"{"user_id":"\udfff"}"#, #"{"user_id":"a","user_id":"b"}"#,
                #"{"identity_token":"x","identity_token":"y"}"#,
            ] {
                let reply = try await client.send(
                    .post, "/v1/sessions/identify", bearer: client.publishableKey, body: body)
                #expect(reply.status == .badRequest, "\(body)")
                #expect(reply.errorCode == "invalid_request")
            }
            // The identity token is judged by its verifier: a malformed token is 401 invalid_identity_token.
            let token = try await client.send(
                .post, "/v1/sessions/identify", bearer: client.publishableKey,
                body: #"{"identity_token":"a.b\u0000.c"}"#)
            #expect(token.status == .unauthorized)
            #expect(token.errorCode == "invalid_identity_token")
            let secret = OpaqueToken.installationSecret()
            let installation = UUID().uuidString.lowercased()
            let duplicated = try await client.send(
                .post, "/v1/sessions/anonymous", bearer: client.publishableKey,
                body:
                    #"{"installation_id":"\#(installation)","installation_secret":"\#(secret)","installation_secret":"\#(OpaqueToken.installationSecret())"}"#
            )
            #expect(duplicated.errorCode == "invalid_request")
            // Nothing was registered: the installation is new to a clean start.
            #expect(try await client.anonymous(installationID: installation, secret: secret).status == .created)
        }
    }
}
