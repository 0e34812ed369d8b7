/// Bounds on what ``CBORReader`` reads, so an attacker's object costs at most a few kilobytes of work.
struct CBORLimits: Hashable, Sendable {
    /// Largest input, in bytes.
    var maxInputBytes: Int
    /// Deepest nesting of arrays, maps and tags (the top item is at depth 1).
    var maxDepth: Int
    /// Longest byte or text string, in bytes.
    var maxStringBytes: Int
    /// Most elements of one array or entries of one map.
    var maxContainerCount: Int
    /// Most data items in the whole input.
    var maxItems: Int

    /// Limits for App Attest objects: real attestation objects are 5–6 KiB with 4 levels and ~20 items.
    static let appAttest = CBORLimits(
        maxInputBytes: 32_768,
        maxDepth: 8,
        maxStringBytes: 16_384,
        maxContainerCount: 32,
        maxItems: 256
    )
}

/// A bounded reader of definite-length CBOR (RFC 8949) that refuses instead of trapping.
///
/// It refuses indefinite lengths, reserved additional information, invalid UTF-8, duplicate map keys
/// and trailing bytes (``AppAttestError/Kind/malformedCBOR``), and anything over its
/// ``CBORLimits`` (``AppAttestError/Kind/oversizedCBOR``).
struct CBORReader {
    private let bytes: [UInt8]
    private let limits: CBORLimits
    private(set) var offset: Int
    private var items = 0

    private init(bytes: [UInt8], offset: Int, limits: CBORLimits) {
        self.bytes = bytes
        self.offset = offset
        self.limits = limits
    }

    /// Reads `bytes` as exactly one CBOR item.
    static func decode(_ bytes: [UInt8], limits: CBORLimits = .appAttest) throws(AppAttestError) -> CBORValue {
        let (value, end) = try decodePrefix(bytes, from: 0, limits: limits)
        guard end == bytes.count else { throw AppAttestError(.malformedCBOR) }
        return value
    }

    /// Reads one CBOR item starting at `start`; returns it and the offset just after it.
    static func decodePrefix(
        _ bytes: [UInt8],
        from start: Int,
        limits: CBORLimits = .appAttest
    ) throws(AppAttestError) -> (value: CBORValue, end: Int) {
        guard bytes.count <= limits.maxInputBytes else { throw AppAttestError(.oversizedCBOR) }
        guard start >= 0, start <= bytes.count else { throw AppAttestError(.malformedCBOR) }
        var reader = CBORReader(bytes: bytes, offset: start, limits: limits)
        let value = try reader.readItem(depth: 1)
        return (value, reader.offset)
    }

    private mutating func readByte() throws(AppAttestError) -> UInt8 {
        guard offset < bytes.count else { throw AppAttestError(.malformedCBOR) }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The argument of a head whose additional information is `info` (0…27).
    private mutating func readArgument(_ info: UInt8) throws(AppAttestError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24, 25, 26, 27:
            let width = 1 << Int(info - 24)
            guard bytes.count - offset >= width else { throw AppAttestError(.malformedCBOR) }
            var value: UInt64 = 0
            for index in offset..<(offset + width) { value = value << 8 | UInt64(bytes[index]) }
            offset += width
            return value
        default:
            // 28…30 are reserved; 31 is an indefinite length (or a break), which App Attest never uses.
            throw AppAttestError(.malformedCBOR)
        }
    }

    /// A length or count argument as an `Int` no larger than `limit`.
    private func bounded(_ argument: UInt64, by limit: Int) throws(AppAttestError) -> Int {
        guard argument <= UInt64(limit) else { throw AppAttestError(.oversizedCBOR) }
        return Int(argument)
    }

    private mutating func readString(length argument: UInt64) throws(AppAttestError) -> [UInt8] {
        let length = try bounded(argument, by: limits.maxStringBytes)
        guard bytes.count - offset >= length else { throw AppAttestError(.malformedCBOR) }
        defer { offset += length }
        return Array(bytes[offset..<(offset + length)])
    }

    private mutating func readItem(depth: Int) throws(AppAttestError) -> CBORValue {
        guard depth <= limits.maxDepth else { throw AppAttestError(.oversizedCBOR) }
        items += 1
        guard items <= limits.maxItems else { throw AppAttestError(.oversizedCBOR) }
        let initial = try readByte()
        let major = initial >> 5
        let info = initial & 0x1F
        switch major {
        case 0:
            return .unsigned(try readArgument(info))
        case 1:
            return .negative(try readArgument(info))
        case 2:
            return .bytes(try readString(length: try readArgument(info)))
        case 3:
            let raw = try readString(length: try readArgument(info))
            guard let text = String(validating: raw, as: UTF8.self) else { throw AppAttestError(.malformedCBOR) }
            return .text(text)
        case 4:
            let count = try bounded(try readArgument(info), by: limits.maxContainerCount)
            var elements: [CBORValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try readItem(depth: depth + 1)) }
            return .array(elements)
        case 5:
            let count = try bounded(try readArgument(info), by: limits.maxContainerCount)
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let key = try readItem(depth: depth + 1)
                guard !entries.contains(where: { $0.key == key }) else { throw AppAttestError(.malformedCBOR) }
                entries.append(CBORMapEntry(key: key, value: try readItem(depth: depth + 1)))
            }
            return .map(entries)
        case 6:
            let tag = try readArgument(info)
            return .tagged(tag, try readItem(depth: depth + 1))
        default:
            return try readSimpleOrFloat(info)
        }
    }

    private mutating func readSimpleOrFloat(_ info: UInt8) throws(AppAttestError) -> CBORValue {
        switch info {
        case 0..<24:
            return .simple(info)
        case 24:
            // RFC 8949 §3.3: a two-byte simple value below 32 is not well-formed.
            let value = try readByte()
            guard value >= 32 else { throw AppAttestError(.malformedCBOR) }
            return .simple(value)
        case 25, 26, 27:
            let width = UInt8(1 << Int(info - 24))
            return .float(bits: try readArgument(info), width: width)
        default:
            throw AppAttestError(.malformedCBOR)
        }
    }
}
