import Foundation
import Testing

@testable import TesseraServer

/// The folders of the server target keep to their layer, and the layers point one way
/// (`HTTP/` → `Core/` ← `Storage/`): the domain and the storage know nothing of HTTP, which only
/// the HTTP layer speaks, and the domain knows nothing of the storage's backends.
@Suite("Layering: HTTP → Core ← Storage, and no way back")
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

    /// The types a folder's files declare at their top level (`struct`, `class`, `enum`, `actor`,
    /// `protocol`, `typealias` at the start of a line, after any modifiers): nested types are left out,
    /// their names (`Kind`, `CodingKeys`) are not the folder's own.
    static func declaredTypes(under folder: String) throws -> Set<String> {
        let declaration = try NSRegularExpression(
            pattern:
                #"^(?:(?:public|package|internal|fileprivate|private|final|@\w+)\s+)*(?:struct|class|enum|actor|protocol|typealias)\s+(\w+)"#,
            options: .anchorsMatchLines)
        var names: Set<String> = []
        for file in try sources(under: folder) {
            let text = file.text as NSString
            for match in declaration.matches(in: file.text, range: NSRange(location: 0, length: text.length)) {
                names.insert(text.substring(with: match.range(at: 1)))
            }
        }
        return names
    }

    /// The places where `text` names one of `types`, outside comments, as `path:line: Name`.
    static func mentions(of types: Set<String>, path: String, text: String) -> [String] {
        var found: [String] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
            let words = code.split { !($0.isLetter || $0.isNumber || $0 == "_") }
            for word in words where types.contains(String(word)) {
                found.append("\(path):\(number + 1): \(word)")
            }
        }
        return found
    }

    /// What marks a storage backend's module in a source file.
    static let backendImport = #"import\s+(\w*SQLite\w*|PostgresNIO|_?Postgres\w*)\b"#

    @Test("No file under Core/ imports SQLite or PostgresNIO or names a type of Storage/SQLite or Storage/Postgres")
    func coreKnowsNoBackend() throws {
        let backendTypes = try Self.declaredTypes(under: "Storage/SQLite")
            .union(Self.declaredTypes(under: "Storage/Postgres"))
        #expect(
            backendTypes.isSuperset(of: ["SQLiteStore", "PostgresStore", "SQLiteRow"]),
            "the scan found the backends' types")
        let files = try Self.sources(under: "Core")
        #expect(files.contains { $0.path == "Core/Model/Records.swift" }, "the scan found the model")
        let imports = try NSRegularExpression(pattern: Self.backendImport)
        let offenders = files.flatMap { file in
            Self.mentions(of: backendTypes, path: file.path, text: file.text)
                + (imports.firstMatch(in: file.text, range: NSRange(file.text.startIndex..., in: file.text)) == nil
                    ? [] : ["\(file.path): imports a backend's module"])
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }

    @Test("No file under Core/, Storage/ or Operators/ names a type declared under HTTP/")
    func coreAndStorageNameNoHTTPType() throws {
        let httpTypes = try Self.declaredTypes(under: "HTTP")
        #expect(
            httpTypes.isSuperset(of: ["EndpointTable", "APIError", "TesseraRequestContext"]),
            "the scan found HTTP's types")
        let files = try Self.sources(under: "Core") + Self.sources(under: "Storage") + Self.sources(under: "Operators")
        #expect(files.contains { $0.path == "Storage/TesseraStore.swift" })
        let offenders = files.flatMap { Self.mentions(of: httpTypes, path: $0.path, text: $0.text) }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }

    /// The types declared in the files at the top of the target (`ServerConfiguration`, which
    /// opens stores, and its kin).
    static func topLevelTypes() throws -> Set<String> {
        let files = try FileManager.default.contentsOfDirectory(atPath: target.path).filter { $0.hasSuffix(".swift") }
        let declaration = try NSRegularExpression(
            pattern:
                #"^(?:(?:public|package|internal|fileprivate|private|final|@\w+)\s+)*(?:struct|class|enum|actor|protocol|typealias)\s+(\w+)"#,
            options: .anchorsMatchLines)
        var names: Set<String> = []
        for file in files {
            let text = try String(contentsOf: target.appendingPathComponent(file), encoding: .utf8)
            for match in declaration.matches(in: text, range: NSRange(location: 0, length: (text as NSString).length)) {
                names.insert((text as NSString).substring(with: match.range(at: 1)))
            }
        }
        return names
    }

    @Test(
        "Storage/ → Secrets/ one way: no file under Secrets/ names a type of Storage/ or of the configuration that opens stores"
    )
    func secretsKnowNoStore() throws {
        let storageTypes = try Self.declaredTypes(under: "Storage")
        #expect(
            storageTypes.isSuperset(of: ["TesseraStore", "SQLiteStore", "PostgresStore"]), "the scan found the stores")
        let topTypes = try Self.topLevelTypes()
        #expect(topTypes.contains("ServerConfiguration"), "the scan found the configuration")
        let files = try Self.sources(under: "Secrets")
        #expect(files.contains { $0.path == "Secrets/SecretResealer.swift" }, "the scan found the sealing")
        let offenders = files.flatMap {
            Self.mentions(of: storageTypes.union(topTypes), path: $0.path, text: $0.text)
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }

    @Test("The type scan sees a named type, and not one in a comment or inside a longer name")
    func typeScanFindsNames() throws {
        let types: Set<String> = ["SQLiteStore", "APIError"]
        #expect(Self.mentions(of: types, path: "x", text: "let store: SQLiteStore").count == 1)
        #expect(Self.mentions(of: types, path: "x", text: "throw APIError(.conflict)").count == 1)
        #expect(Self.mentions(of: types, path: "x", text: "/// as `SQLiteStore` does\nlet a = 1 // APIError").isEmpty)
        #expect(Self.mentions(of: types, path: "x", text: "let s: SQLiteStoreOptions, e: MyAPIError").isEmpty)
        let imports = try NSRegularExpression(pattern: Self.backendImport)
        for sample in ["import PostgresNIO", "import CTesseraSQLite", "internal import VaporCSQLite"] {
            #expect(
                imports.firstMatch(in: sample, range: NSRange(sample.startIndex..., in: sample)) != nil, "\(sample)")
        }
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
