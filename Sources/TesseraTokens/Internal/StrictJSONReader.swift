/// An RFC 8259 JSON reader that is strict where Foundation is lenient.
///
/// It rejects a byte-order mark, trailing commas, comments, invalid or overlong UTF-8, lone
/// surrogates, control characters in strings, numbers that are not finite doubles, nesting deeper
/// than ``maximumDepth`` and, above all, duplicate member names: `JSONDecoder` keeps the first of
/// two `alg` members and `JSONSerialization` the last, so two readers of one token can disagree.
struct StrictJSONReader {
    static let maximumDepth = 32

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Reads a document whose top-level value must be an object.
    static func object(from bytes: UnsafeRawBufferPointer) -> JSONObject? {
        guard case .object(let object)? = value(from: bytes) else { return nil }
        return object
    }

    /// Reads a document whose top-level value must be an object.
    static func object(from bytes: [UInt8]) -> JSONObject? {
        bytes.withUnsafeBytes { object(from: $0) }
    }

    /// Reads one JSON document; `nil` if it is not strictly valid.
    static func value(from bytes: UnsafeRawBufferPointer) -> JSONValue? {
        var reader = StrictJSONReader(bytes: bytes)
        reader.skipWhitespace()
        guard let value = reader.readValue() else { return nil }
        reader.skipWhitespace()
        return reader.index == bytes.count ? value : nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func readValue() -> JSONValue? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return readObject()
        case UInt8(ascii: "["): return readArray()
        case UInt8(ascii: "\""): return readString().map { JSONValue.string($0.0) }
        case UInt8(ascii: "t"): return readLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return readLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return readLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return readNumber()
        default: return nil
        }
    }

    private mutating func readLiteral(_ literal: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { return nil }
        let pointer = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != pointer[offset] {
            return nil
        }
        index += count
        return value
    }

    private mutating func readObject() -> JSONValue? {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { return nil }
        index += 1  // {
        var members: [JSONObject.Member] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject(members: members))
        }
        // Room for the members of a token's header or claims at once, not grown by doubling.
        members.reserveCapacity(8)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let (name, isASCII) = readString()
            else { return nil }
            for member in members where member.isASCII == isASCII && member.name.utf8.count == name.utf8.count {
                // Duplicate member names, compared byte for byte (ASCII: `==` is a byte comparison).
                if isASCII ? member.name == name : member.name.utf8.elementsEqual(name.utf8) { return nil }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipWhitespace()
            guard let value = readValue() else { return nil }
            members.append(JSONObject.Member(name: name, isASCII: isASCII, value: value))
            skipWhitespace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            return .object(JSONObject(members: members))
        }
    }

    private mutating func readArray() -> JSONValue? {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { return nil }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            guard let value = readValue() else { return nil }
            elements.append(value)
            skipWhitespace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { return nil }
            index += 1
            return .array(elements)
        }
    }

    private mutating func readNumber() -> JSONValue? {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(bytes[index]) {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        } else {
            return nil
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { return nil }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { return nil }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let number = Double(text), number.isFinite else { return nil }
        return .number(number)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Reads a string starting at its opening quote; validates UTF-8 and escapes.
    /// Returns the string and whether it is pure ASCII.
    private mutating func readString() -> (String, Bool)? {
        index += 1  // opening quote
        let start = index
        var isASCII = true
        // Fast path: no escapes. Validate UTF-8 while scanning.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return (String(decoding: slice, as: UTF8.self), isASCII)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { return nil }
            if byte < 0x80 {
                index += 1
            } else {
                guard let length = validUTF8SequenceLength(at: index) else { return nil }
                isASCII = false
                index += length
            }
        }
        guard index < bytes.count else { return nil }
        // Slow path: escapes present.
        var scalars = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return (String(decoding: scalars, as: UTF8.self), scalars.allSatisfy { $0 < 0x80 })
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append(0x22)
                case UInt8(ascii: "\\"): scalars.append(0x5C)
                case UInt8(ascii: "/"): scalars.append(0x2F)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = readUnicodeEscape() else { return nil }
                    scalars.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    return nil
                }
            default:
                if byte < 0x20 { return nil }
                if byte < 0x80 {
                    scalars.append(byte)
                    index += 1
                } else {
                    guard let length = validUTF8SequenceLength(at: index) else { return nil }
                    scalars.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<index + length]))
                    index += length
                }
            }
        }
        return nil
    }

    /// Reads the four hex digits after `\u` (and a low surrogate escape after a high one).
    private mutating func readUnicodeEscape() -> Unicode.Scalar? {
        guard let first = readHex4() else { return nil }
        switch first {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { return nil }
            index += 2
            guard let second = readHex4(), (0xDC00...0xDFFF).contains(second) else { return nil }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(first)
        }
    }

    private mutating func readHex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// The length of the well-formed UTF-8 sequence at `position` (Unicode Table 3-7), or `nil`.
    private func validUTF8SequenceLength(at position: Int) -> Int? {
        let available = bytes.count - position
        let b0 = bytes[position]
        func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            offset < available && range.contains(bytes[position + offset])
        }
        switch b0 {
        case 0xC2...0xDF:
            return continuation(1) ? 2 : nil
        case 0xE0:
            return continuation(1, 0xA0...0xBF) && continuation(2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(1) && continuation(2) ? 3 : nil
        case 0xED:
            return continuation(1, 0x80...0x9F) && continuation(2) ? 3 : nil
        case 0xF0:
            return continuation(1, 0x90...0xBF) && continuation(2) && continuation(3) ? 4 : nil
        case 0xF1...0xF3:
            return continuation(1) && continuation(2) && continuation(3) ? 4 : nil
        case 0xF4:
            return continuation(1, 0x80...0x8F) && continuation(2) && continuation(3) ? 4 : nil
        default:
            return nil
        }
    }
}
