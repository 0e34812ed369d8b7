import Foundation
import Testing

@testable import TesseraServer

/// The folders of the server target keep to their layer: the domain and the storage know nothing
/// of HTTP, which only the HTTP layer speaks.
@Suite("Layering: Core and Storage know nothing of HTTP")
struct LayeringTests {
    /// `Server/Sources/TesseraServer`, found from this file's own path.
    static let target = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/TesseraServer")

    /// The Swift files under `folder` of the target, with their text.
    static func sources(under folder: String) throws -> [(path: String, text: String)] {
        let root = target.appendingPathComponent(folder)
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return try enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map {
            ("\(folder)/\($0)", try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8))
        }
    }

    /// What marks HTTP in a source file: an import of an HTTP module, an HTTP type, a status.
    static let forbidden: [(name: String, pattern: String)] = [
        // HummingbirdBcrypt is a password hash with no HTTP in it (the operator accounts use it).
        ("an import of an HTTP module", #"import\s+(Hummingbird(?!Bcrypt\b)\w*|HTTPTypes|NIOHTTP1)\b"#),
        ("an HTTP type", #"\bHTTP(Response|Request|Fields?|Error)\b"#),
        ("a status", #"\.status\b"#),
        (
            "a status name",
            #"(?<![\w.])\.(ok|created|noContent|badRequest|unauthorized|forbidden|notFound|methodNotAllowed|conflict|contentTooLarge|tooManyRequests|internalServerError|serviceUnavailable)\b"#
        ),
        ("a status code", #"\b[45][0-9]{2}\b"#),
    ]

    /// The HTTP marks of a text, as `path:line: what`.
    static func violations(path: String, text: String) throws -> [String] {
        var found: [String] = []
        let rules = try forbidden.map { ($0.name, try NSRegularExpression(pattern: $0.pattern)) }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line)
            let range = NSRange(line.startIndex..., in: line)
            // A length limit of text ("at most 500 characters") is a number, not a status.
            let textLimit = line.contains("characters") || line.contains("unicodeScalars.count")
            for rule in rules where rule.1.firstMatch(in: line, range: range) != nil {
                if rule.0 == "a status code", textLimit { continue }
                found.append("\(path):\(number + 1): \(rule.0): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found
    }

    @Test("No file under Core/, Storage/ or Operators/ imports an HTTP module or mentions an HTTP status")
    func coreAndStorageKnowNoHTTP() throws {
        let files = try Self.sources(under: "Core") + Self.sources(under: "Storage") + Self.sources(under: "Operators")
        #expect(files.count > 20, "the scan found the sources")
        #expect(files.contains { $0.path == "Core/CoreError.swift" })
        let violations = try files.flatMap { try Self.violations(path: $0.path, text: $0.text) }
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
    }

    @Test("Only HTTP/ and the console's handlers (Console/Handlers/) import Hummingbird, HTTPTypes or NIOHTTP1")
    func onlyHTTPImportsHTTP() throws {
        let files = try Self.sources(under: "").filter {
            !$0.path.hasPrefix("/HTTP/") && !$0.path.hasPrefix("/Console/Handlers/")
        }
        #expect(files.contains { $0.path == "/Core/CoreError.swift" })
        let imports = try NSRegularExpression(pattern: Self.forbidden[0].pattern)
        let offenders = files.filter {
            imports.firstMatch(in: $0.text, range: NSRange($0.text.startIndex..., in: $0.text)) != nil
        }
        #expect(offenders.isEmpty, "\(offenders.map(\.path))")
    }

    @Test("The console's pages (Console/Pages/) are pure renderers: no HTTP module, type or status")
    func consolePagesKnowNoHTTP() throws {
        let files = try Self.sources(under: "Console/Pages")
        #expect(files.contains { $0.path == "Console/Pages/ProfilePage.swift" })
        let violations = try files.flatMap { try Self.violations(path: $0.path, text: $0.text) }
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
    }

    @Test("The scan sees what it looks for")
    func scanFindsHTTP() throws {
        let samples = [
            "import Hummingbird", "public import HTTPTypes", "let s: HTTPResponse.Status", "error.status == x",
            "APIError(.unauthorized, .invalidCredentials, m)", "throw E(.notFound)", "/// answered `503`",
        ]
        for sample in samples {
            #expect(try !Self.violations(path: "x", text: sample).isEmpty, "\(sample)")
        }
        let clean = [
            "throw CoreError.notFound", "ErrorCode.serviceUnavailable", "let limit = 4096", "import Logging",
            "import HummingbirdBcrypt", "guard reason.unicodeScalars.count <= 500,",
        ]
        for sample in clean {
            #expect(try Self.violations(path: "x", text: sample).isEmpty, "\(sample)")
        }
    }
}
