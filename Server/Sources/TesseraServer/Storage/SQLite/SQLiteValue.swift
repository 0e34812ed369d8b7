/// A value bound to, or read from, an SQLite statement.
enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    init(_ value: Int) { self = .integer(Int64(value)) }
    init(_ value: Int64) { self = .integer(value) }
    init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    init(_ value: String) { self = .text(value) }
    init(_ value: [UInt8]) { self = .blob(value) }
    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }

    var int64: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    var bytes: [UInt8]? {
        switch self {
        case .blob(let value): return value
        case .text(let value): return Array(value.utf8)
        default: return nil
        }
    }
}

/// One result row: its values by column index.
struct SQLiteRow: Sendable {
    var values: [SQLiteValue]

    subscript(_ index: Int) -> SQLiteValue { values[index] }

    func int(_ index: Int) -> Int64 { values[index].int64 ?? 0 }
    func optionalInt(_ index: Int) -> Int64? { values[index].int64 }
    func text(_ index: Int) -> String { values[index].string ?? "" }
    func optionalText(_ index: Int) -> String? { values[index].string }
    func bool(_ index: Int) -> Bool { int(index) != 0 }
    func blob(_ index: Int) -> [UInt8] { values[index].bytes ?? [] }
}
