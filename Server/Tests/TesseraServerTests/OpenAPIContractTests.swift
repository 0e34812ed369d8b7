import Foundation
import Hummingbird
import Testing

@testable import TesseraServer

/// Holds the OpenAPI document the server serves against what the server does: the routes of the
/// router it builds, and the error codes it can answer.
@Suite("The OpenAPI document against the router and the error codes")
struct OpenAPIContractTests {
    /// The HTTP methods an OpenAPI path item can hold operations under.
    static let operationKeys: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// Error codes of ``ErrorCode/all`` that no HTTP answer carries, with the reason.
    static let notOnTheWire: [ErrorCode: String] = [
        .slugTaken: "only project creation answers it, which only the operator CLI does",
        .operatorExists: "only the console and `tessera operators create` answer it, never /v1",
    ]

    /// `TokenError` codes that stay inside the server: a session JWT that fails is `invalid_credentials`.
    static let sessionJWTOnlyTokenCodes: Set<String> = [
        "invalid_token", "token_expired", "token_not_yet_valid", "session_kind_not_allowed",
    ]

    static func document() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8))
        return try #require(object as? [String: Any])
    }

    /// "METHOD /path/{parameter}" for every operation in the document.
    static func documentedOperations() throws -> Set<String> {
        let paths = try #require(try document()["paths"] as? [String: [String: Any]])
        var operations: Set<String> = []
        for (path, item) in paths {
            for key in item.keys where operationKeys.contains(key) {
                operations.insert("\(key.uppercased()) \(path)")
            }
        }
        return operations
    }

    /// "METHOD /path/{parameter}" for every route of the router the server runs (`RouterPath` writes a
    /// `:parameter` capture as `{parameter}`, as OpenAPI does).
    static func routedOperations() async throws -> Set<String> {
        // The router, not the store, is under test: SQLite, so no PostgreSQL pool is left open.
        let environment = try await TestEnvironment.make(backend: .sqlite)
        let core = TesseraCore(
            store: environment.store, configuration: environment.configuration, metrics: ServerMetrics())
        let routes = TesseraRouter.build(core: core).routes
        // The console's pages are HTML for browsers, not the API (docs/CONSOLE.md describes them).
        return Set(
            routes.filter { !$0.path.description.hasPrefix("/console") }.map {
                "\($0.method.rawValue) \($0.path.description)"
            })
    }

    /// The codes of the document's `ErrorCode` schema, which every error response's `code` refers to.
    static func documentedErrorCodes() throws -> [String] {
        let components = try #require(try document()["components"] as? [String: Any])
        let schemas = try #require(components["schemas"] as? [String: Any])
        let errorCode = try #require(schemas["ErrorCode"] as? [String: Any])
        return try #require(errorCode["enum"] as? [String])
    }

    @Test("every route the router answers is documented with its method")
    func everyRouteIsDocumented() async throws {
        let routed = try await Self.routedOperations()
        #expect(routed.count >= 30, "the router has \(routed.count) routes: \(routed.sorted())")
        let undocumented = routed.subtracting(try Self.documentedOperations()).sorted()
        #expect(undocumented.isEmpty, "routed but not in Server/openapi.json: \(undocumented)")
    }

    @Test("every documented operation is routed")
    func everyDocumentedOperationIsRouted() async throws {
        let documented = try Self.documentedOperations()
        #expect(documented.count >= 30, "the document has \(documented.count) operations")
        let unrouted = documented.subtracting(try await Self.routedOperations()).sorted()
        #expect(unrouted.isEmpty, "in Server/openapi.json but not routed: \(unrouted)")
    }

    @Test("every error code the server can answer is in the document's ErrorCode list, and no other")
    func errorCodesAreDocumented() throws {
        let documented = try Self.documentedErrorCodes()
        #expect(Set(documented).count == documented.count, "ErrorCode lists a code twice: \(documented)")
        let answered = ErrorCode.all.filter { Self.notOnTheWire[$0] == nil }.map(\.rawValue)
        let undocumented = answered.filter { !documented.contains($0) }
        #expect(undocumented.isEmpty, "answered by the server but not in ErrorCode: \(undocumented)")
        let unknown = documented.filter { !answered.contains($0) }
        #expect(unknown.isEmpty, "in ErrorCode but not in ErrorCode.all: \(unknown)")
        for code in Self.notOnTheWire.keys {
            #expect(ErrorCode.all.contains(code), "\(code) is excused but not in ErrorCode.all")
            #expect(!documented.contains(code.rawValue), "\(code) is documented yet excused as not on the wire")
        }
    }

    @Test("ErrorCode.all lists every error code the server sources and TokenError make")
    func errorCodeListIsComplete() throws {
        #expect(Set(ErrorCode.all).count == ErrorCode.all.count, "ErrorCode.all lists a code twice")
        let known = Set(ErrorCode.all.map(\.rawValue))
        // The server's own codes, wherever its sources make one.
        let serverCodes = try Self.codeLiterals(
            under: Self.repository.appendingPathComponent("Server/Sources"), made: "rawValue: ")
        #expect(serverCodes.count >= 20, "found only \(serverCodes.sorted()) in Server/Sources")
        let unlisted = serverCodes.subtracting(known).sorted()
        #expect(unlisted.isEmpty, "made in Server/Sources but not in ErrorCode.all: \(unlisted)")
        // The identity-token codes identify passes on unchanged (TokenError's; the webhook verifier's
        // codes in TesseraTokens are for receivers of webhooks, never answered by the server).
        let tokenCodes = try Self.codeLiterals(
            under: Self.repository.appendingPathComponent("Sources/TesseraTokens"), made: "Code(rawValue: ",
            in: "TokenError.swift")
        #expect(tokenCodes.isSuperset(of: Self.sessionJWTOnlyTokenCodes), "TokenError codes: \(tokenCodes.sorted())")
        let unlistedTokenCodes = tokenCodes.subtracting(known).subtracting(Self.sessionJWTOnlyTokenCodes).sorted()
        #expect(
            unlistedTokenCodes.isEmpty, "TokenError codes not in ErrorCode.identityToken: \(unlistedTokenCodes)")
    }

    /// The repository's root, found from this file (`Server/Tests/TesseraServerTests/…`).
    static var repository: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url
    }

    /// Every `"…"` literal right after `made` (`rawValue: `, say) in the Swift files under `directory`, at any depth.
    static func codeLiterals(under directory: URL, made: String, in fileName: String? = nil) throws -> Set<String> {
        let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
        let pattern = try Regex(NSRegularExpression.escapedPattern(for: made) + #""([a-z_]+)""#)
        var codes: Set<String> = []
        for case let file as URL in files
        where file.pathExtension == "swift" && (fileName == nil || file.lastPathComponent == fileName) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: pattern) {
                if let code = match.output[1].substring { codes.insert(String(code)) }
            }
        }
        return codes
    }

    /// Codes the document may list under another status than ``APIError/status(of:)``'s, with why.
    static let otherStatuses: [String: (status: Int, why: String)] = [
        "dpop_proof_required": (401, "on a bound session's credential it is the DPoP challenge (RFC 9449 §7.1)")
    ]

    /// `node` with its `$ref`s followed within the document.
    static func resolved(_ node: Any?, in document: [String: Any]) -> [String: Any] {
        var node = node as? [String: Any] ?? [:]
        var hops = 0
        while let reference = node["$ref"] as? String, reference.hasPrefix("#/"), hops < 10 {
            var target: Any = document
            for part in reference.dropFirst(2).split(separator: "/") {
                target = (target as? [String: Any])?[String(part).replacingOccurrences(of: "~1", with: "/")] ?? [:]
            }
            node = target as? [String: Any] ?? [:]
            hops += 1
        }
        return node
    }

    @Test("every error response lists only codes the server answers with that status")
    func errorCodesHaveTheirStatus() throws {
        let document = try Self.document()
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let codes = Dictionary(uniqueKeysWithValues: ErrorCode.all.map { ($0.rawValue, $0) })
        var checked = 0
        for (path, item) in paths {
            for (method, operation) in item where Self.operationKeys.contains(method) {
                let responses = (operation as? [String: Any])?["responses"] as? [String: Any] ?? [:]
                for (status, response) in responses where status.hasPrefix("4") || status.hasPrefix("5") {
                    let place = "\(method.uppercased()) \(path) \(status)"
                    let content = Self.resolved(response, in: document)["content"] as? [String: Any]
                    let schema = Self.resolved(
                        (content?["application/json"] as? [String: Any])?["schema"], in: document)
                    let branches = (schema["allOf"] as? [Any] ?? []).map { Self.resolved($0, in: document) }
                    let enums = branches.compactMap { branch -> [String]? in
                        let error = (branch["properties"] as? [String: Any])?["error"] as? [String: Any]
                        let code = (error?["properties"] as? [String: Any])?["code"] as? [String: Any]
                        return code?["enum"] as? [String]
                    }
                    let listed = try #require(enums.first, "\(place): no code enum")
                    for name in listed {
                        let code = try #require(codes[name], "\(place): \(name) is not a code of the server")
                        let expected = Int(APIError.status(of: code).code)
                        let allowed = Set([expected] + (Self.otherStatuses[name].map { [$0.status] } ?? []))
                        #expect(allowed.contains(Int(status) ?? 0), "\(place): \(name) is answered with \(expected)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 200, "\(checked) codes checked")
    }
}
