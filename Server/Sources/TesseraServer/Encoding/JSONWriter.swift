/// A small, fast JSON writer for response bodies: explicit `null`s, fields in a fixed order.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init() {
        bytes.reserveCapacity(1024)
    }

    private mutating func separator() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    mutating func objectStart() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func objectEnd() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func arrayStart() {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    mutating func arrayEnd() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes a member name (a literal that needs no escaping); the next value written belongs to it.
    mutating func key(_ name: StaticString) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { utf8 in
            assert(!utf8.contains(where: Self.needsEscape), "member names are plain literals")
            bytes.append(contentsOf: utf8)
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a member name computed at run time, escaped as needed.
    mutating func key(named name: String) {
        separator()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    mutating func string(_ value: String) {
        separator()
        appendString(value)
        needsComma = true
    }

    mutating func null() {
        separator()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    mutating func bool(_ value: Bool) {
        separator()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    mutating func integer(_ value: Int64) {
        separator()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt64 = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
        needsComma = true
    }

    mutating func raw(_ json: [UInt8]) {
        separator()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    mutating func field(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    mutating func field(_ name: StaticString, _ value: Int64) {
        key(name)
        integer(value)
    }

    mutating func field(_ name: StaticString, _ value: Int) {
        key(name)
        integer(Int64(value))
    }

    /// Writes a time as an RFC 3339 UTC string with second precision.
    mutating func time(_ name: StaticString, _ seconds: Int64) {
        key(name)
        separator()
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(seconds, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    mutating func time(_ name: StaticString, _ seconds: Int64?) {
        if let seconds {
            time(name, seconds)
        } else {
            key(name)
            null()
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether a byte must be escaped inside a JSON string.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func appendString(_ value: String) {
        var value = value
        // Almost every string (IDs, tokens, times) needs no escaping: copy it in one go.
        let copied = value.withUTF8 { utf8 -> Bool in
            guard !utf8.contains(where: Self.needsEscape) else { return false }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return true
        }
        if !copied { appendEscaped(value) }
    }

    private mutating func appendEscaped(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0x0A:
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(UInt8(ascii: "n"))
            case 0x0D:
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(UInt8(ascii: "r"))
            case 0x09:
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0x0F)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
