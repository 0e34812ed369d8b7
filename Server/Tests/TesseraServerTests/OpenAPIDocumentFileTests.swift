import Foundation
import Testing

@testable import TesseraServer

/// `Server/openapi.json` is the source of the contract; the build compiles it into the server (the
/// `OpenAPIEmbedPlugin` build-tool plugin), which serves it. These tests fail when what the server
/// holds or answers is not that file, byte for byte.
@Suite("The OpenAPI document file")
struct OpenAPIDocumentFileTests {
    /// `Server/openapi.json`, found from this file (`Server/Tests/TesseraServerTests/…`).
    static var fileURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("openapi.json")
    }

    @Test("the compiled document is Server/openapi.json byte for byte")
    func compiledDocumentEqualsFile() throws {
        let file = try [UInt8](Data(contentsOf: Self.fileURL))
        let compiled = Array(OpenAPIDocument.json.utf8)
        if compiled != file {
            let firstDifference =
                zip(compiled, file).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(compiled.count, file.count)
            Issue.record(
                """
                OpenAPIDocument.json (\(compiled.count) bytes) differs from Server/openapi.json \
                (\(file.count) bytes) from byte \(firstDifference) on.
                """)
        }
    }

    @Test("GET /openapi.json answers Server/openapi.json byte for byte")
    func servedDocumentEqualsFile() async throws {
        let file = try [UInt8](Data(contentsOf: Self.fileURL))
        try await TestEnvironment.withApp { environment, client in
            let reply = try await client.send(.get, "/openapi.json")
            #expect(reply.status == .ok)
            #expect(reply.headers[.contentType] == "application/json; charset=utf-8")
            let same = reply.body == file
            #expect(same, "GET /openapi.json answered \(reply.body.count) bytes, Server/openapi.json has \(file.count)")
        }
    }
}
