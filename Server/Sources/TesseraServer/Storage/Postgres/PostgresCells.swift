import PostgresNIO

/// Typed access to the columns of one result row, by position.
struct PostgresCells {
    private let row: PostgresRandomAccessRow

    init(_ row: PostgresRow) {
        self.row = row.makeRandomAccess()
    }

    func text(_ index: Int) throws -> String { try row[index].decode(String.self) }
    func optionalText(_ index: Int) throws -> String? { try row[index].decode(String?.self) }
    func int(_ index: Int) throws -> Int64 { try row[index].decode(Int64.self) }
    func optionalInt(_ index: Int) throws -> Int64? { try row[index].decode(Int64?.self) }
    func bool(_ index: Int) throws -> Bool { try row[index].decode(Bool.self) }

    func bytes(_ index: Int) throws -> [UInt8] {
        var buffer = try row[index].decode(ByteBuffer.self)
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    func optionalBytes(_ index: Int) throws -> [UInt8]? {
        guard var buffer = try row[index].decode(ByteBuffer?.self) else { return nil }
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }
}

extension Array where Element == UInt8 {
    /// The bytes as a `bytea` parameter.
    var bytea: ByteBuffer { ByteBuffer(bytes: self) }
}
