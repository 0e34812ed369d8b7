/// Writes compact JSON objects with members in the order given; used to mint tokens.
struct JSONWriter {
    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var first = true

    mutating func member(_ name: String, _ value: String) {
        key(name)
        appendString(value)
    }

    mutating func member(_ name: String, _ value: Int64) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func member(_ name: String, _ values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A member whose value is already compact JSON (an object another writer finished).
    mutating func member(_ name: String, json: [UInt8]) {
        key(name)
        bytes.append(contentsOf: json)
    }

    mutating func nullMember(_ name: String) {
        key(name)
        bytes.append(contentsOf: "null".utf8)
    }

    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func key(_ name: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension Double {
    /// A NumericDate as written on the wire: whole seconds, rounded down, clamped to `Int64`.
    ///
    /// A token may carry any finite number (`"iat":1e300`), and claims read from one can be encoded
    /// or signed again: that must not trap. NaN, which no reader produces, is written as 0 (expired).
    var numericDate: Int64 {
        let seconds = rounded(.down)
        if seconds.isNaN { return 0 }
        if seconds >= 0x1p63 { return .max }
        if seconds < -0x1p63 { return .min }
        return Int64(seconds)
    }
}
