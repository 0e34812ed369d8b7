import Crypto
import Foundation
import TesseraTestProcess
import TesseraTokens
import Testing

@testable import TesseraServer

/// The forms a secret could take in a database: the text, the raw bytes, base64, base64url, hex,
/// and for a signing key its PEM and DER encodings.
struct SecretNeedles {
    private(set) var needles: [(label: String, bytes: [UInt8])] = []

    /// An identity secret (or any credential string): the text, its random part, and that part decoded.
    mutating func add(text: String, label: String) {
        needles.append((label, Array(text.utf8)))
        if let underscore = text.firstIndex(of: "_") {
            let random = String(text[text.index(after: underscore)...])
            needles.append(("\(label) without prefix", Array(random.utf8)))
            if let decoded = Base64URL.decode(random) { add(bytes: decoded, label: "\(label) decoded") }
        }
    }

    /// A webhook secret (`whsec_` + base64): the text, its base64 part, and the decoded key bytes.
    mutating func add(webhookSecret text: String, label: String) {
        add(text: text, label: label)
        if let secret = try? WebhookSecret(text) { add(bytes: secret.bytes, label: "\(label) key") }
    }

    /// A private key: raw, base64, base64url, hex, and its PEM and DER forms.
    mutating func add(privateKey raw: [UInt8], label: String) {
        add(bytes: raw, label: label)
        if let key = try? P256.Signing.PrivateKey(rawRepresentation: raw) {
            let der = Array(key.derRepresentation)
            needles.append(("\(label) DER", der))
            for line in key.pemRepresentation.split(separator: "\n") where !line.hasPrefix("-----") && line.count >= 32
            {
                needles.append(("\(label) PEM line", Array(line.utf8)))
            }
            add(bytes: Array(key.x963Representation.suffix(32)), label: "\(label) scalar")
        }
    }

    private mutating func add(bytes: [UInt8], label: String) {
        needles.append((label, bytes))
        needles.append(("\(label) base64", Array(Data(bytes).base64EncodedString().utf8)))
        needles.append(("\(label) base64url", Array(Base64URL.encode(bytes).utf8)))
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        needles.append(("\(label) hex", Array(hex.utf8)))
        needles.append(("\(label) HEX", Array(hex.uppercased().utf8)))
    }

    /// The labels of the needles found in `haystack`.
    func found(in haystack: [UInt8]) -> [String] {
        let data = Data(haystack)
        return needles.filter { data.range(of: Data($0.bytes)) != nil }.map(\.label)
    }
}

/// Reads everything a copy of the database holds.
enum DatabaseDump {
    /// Every column of every row of every table of an SQLite file, as bytes.
    static func sqliteCells(path: String) throws -> [UInt8] {
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5000, queryOnly: true)
        defer { connection.close() }
        var bytes: [UInt8] = []
        let tables = try connection.query("SELECT name FROM sqlite_master WHERE type = 'table'").map { $0.text(0) }
        #expect(tables.contains("identity_secrets") && tables.contains("session_keys"))
        for table in tables {
            for row in try connection.query("SELECT * FROM \"\(table)\"") {
                for value in row.values {
                    switch value {
                    case .null: break
                    case .integer(let number): bytes += Array(String(number).utf8)
                    case .text(let text): bytes += Array(text.utf8)
                    case .blob(let blob): bytes += blob
                    }
                    bytes.append(0)
                }
            }
        }
        return bytes
    }

    /// The raw bytes of an SQLite database file and its WAL.
    static func sqliteFiles(path: String) -> [UInt8] {
        ["", "-wal"].flatMap { suffix in
            FileManager.default.contents(atPath: path + suffix).map(Array.init) ?? []
        }
    }

    /// `pg_dump` of the store's schema, data included.
    static func postgres(_ store: PostgresStore) async throws -> [UInt8] {
        let url = try #require(PostgresTestDatabase.url)
        let schema = try #require(store.configuration.schema)
        let ran = try await ChildProcess.run("/usr/bin/env", ["pg_dump", "--no-owner", "--schema=\(schema)", url])
        #expect(ran.termination == .exited(0), "\(ran.errors)")
        let text = ran.output
        #expect(
            text.contains("COPY \(schema).identity_secrets") || text.contains("COPY \"\(schema)\".identity_secrets"))
        return Array(text.utf8)
    }

    /// What a copy of `store`'s database holds: every cell (SQLite: and, with `rawFiles`, the bytes
    /// of its files) or the dump.
    static func everything(_ store: any TesseraStore, rawFiles: Bool = true) async throws -> [UInt8] {
        if let sqlite = store as? SQLiteStore {
            return try sqliteCells(path: sqlite.path) + (rawFiles ? sqliteFiles(path: sqlite.path) : [])
        }
        return try await postgres(try #require(store as? PostgresStore))
    }
}

/// One database that several stores open, each with its own master keys (nodes, restarts, the CLI).
struct SharedDatabase: Sendable {
    let backend: StoreBackend
    let sqlitePath: String
    let postgres: PostgresConfiguration?

    static func make(_ backend: StoreBackend = .selected) throws -> SharedDatabase {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tessera-secrets-\(UUID().uuidString)/tessera.sqlite"
        ).path
        return SharedDatabase(
            backend: backend, sqlitePath: path,
            postgres: backend == .postgres ? try PostgresTestDatabase.configuration(maximumConnections: 4) : nil)
    }

    /// A store on this database sealing with `keys`.
    func store(_ keys: MasterKeyring) throws -> any TesseraStore {
        if let postgres { return PostgresStore(configuration: postgres, masterKeys: keys) }
        return try SQLiteStore(path: sqlitePath, masterKeys: keys)
    }

    /// The configuration that names this database (the PostgreSQL URL with its schema is not
    /// expressible as a URL: callers set `masterKeys` and use ``store(_:)`` there).
    var database: DatabaseURL { .sqlite(path: sqlitePath) }
}
