/// The checks a request body passes before it is decoded, so that no body has two readings.
///
/// `JSONDecoder` is lenient where an API must not be: of two members with one name it keeps one
/// (which one is an implementation detail), and what it makes of an escaped lone surrogate
/// (`"\ud800"`) differs between Foundation implementations (U+FFFD, or an error). Here a body is refused when it is not strict RFC 8259 JSON in UTF-8, when an object
/// anywhere has a member name twice (compared byte for byte after unescaping), when it nests deeper
/// than ``maximumDepth``, or when a string in a member the server reads holds a control character
/// (C0, DEL or C1, raw or escaped) or an unpaired surrogate. Members the server does not read are
/// ignored, as the contract promises newer clients, so their strings are not judged. Numbers are
/// only checked for syntax here; each field's decoder checks its range.
struct StrictRequestJSON {
    static let maximumDepth = 32

    /// Why a body was refused.
    enum Failure: Error, Equatable {
        case malformed
        case duplicateMember(String)
        case controlCharacter
        case unpairedSurrogate
        case tooDeep

        var message: String {
            switch self {
            case .malformed: return "The request body is not valid JSON."
            case .duplicateMember(let name): return "The request body has the member \(name) more than once."
            case .controlCharacter: return "Strings in the request body must not contain control characters."
            case .unpairedSurrogate:
                return "Strings in the request body must not contain unpaired surrogates (\\ud800-\\udfff escapes)."
            case .tooDeep: return "The request body nests deeper than \(maximumDepth) levels."
            }
        }
    }

    /// A string as read: the bytes of the body between its quotes when it has no escape (no copy),
    /// else its unescaped bytes.
    private enum Text {
        case slice(Range<Int>)
        case unescaped([UInt8])
    }

    private let bytes: [UInt8]
    private let readMembers: Set<String>?
    /// The member names of the objects being read, innermost last (one array for the whole body,
    /// rather than one per object).
    private var names: [Text] = []
    private var index = 0
    private var depth = 0
    /// Whether the strings being read belong to a member the server reads.
    private var judging = true

    private init(_ bytes: [UInt8], readMembers: Set<String>?) {
        self.bytes = bytes
        self.readMembers = readMembers
    }

    /// Checks one JSON document.
    ///
    /// - Parameter readMembers: the top-level members the server reads (their strings are judged in
    ///   full, nested ones included); nil judges every string.
    static func validate(_ bytes: [UInt8], readMembers: Set<String>? = nil) throws(Failure) {
        var reader = StrictRequestJSON(bytes, readMembers: readMembers)
        reader.skipWhitespace()
        try reader.value()
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw .malformed }
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func value() throws(Failure) {
        guard let byte = current else { throw .malformed }
        switch byte {
        case UInt8(ascii: "{"): try object()
        case UInt8(ascii: "["): try array()
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw .malformed
        }
    }

    private mutating func literal(_ text: StaticString) throws(Failure) {
        let count = text.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw .malformed }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { throw .malformed }
        index += count
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw .tooDeep }
        index += 1
        skipWhitespace()
    }

    private mutating func object() throws(Failure) {
        try enter()
        defer { depth -= 1 }
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        let firstName = names.count
        defer { names.removeSubrange(firstName...) }
        while true {
            guard current == UInt8(ascii: "\"") else { throw .malformed }
            // A name is never judged: a name with a control character names no member the server reads.
            let outer = judging
            judging = false
            let name = try string()
            judging = outer
            if names[firstName...].contains(where: { same($0, name) }) {
                throw .duplicateMember(withBytes(name) { String(decoding: $0, as: UTF8.self) })
            }
            names.append(name)
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw .malformed }
            index += 1
            skipWhitespace()
            if depth == 1, let readMembers {
                judging = withBytes(name) { name in readMembers.contains { $0.utf8.elementsEqual(name) } }
            }
            try value()
            judging = outer
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                return
            default: throw .malformed
            }
        }
    }

    private mutating func array() throws(Failure) {
        try enter()
        defer { depth -= 1 }
        if current == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            try value()
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                return
            default: throw .malformed
            }
        }
    }

    private mutating func number() throws(Failure) {
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw .malformed }
        index += 1
        if first != UInt8(ascii: "0") { while let byte = current, isDigit(byte) { index += 1 } }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let byte = current, isDigit(byte) else { throw .malformed }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw .malformed }
            while let byte = current, isDigit(byte) { index += 1 }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private func withBytes<R>(_ text: Text, _ body: (ArraySlice<UInt8>) -> R) -> R {
        switch text {
        case .slice(let range): return body(bytes[range])
        case .unescaped(let unescaped): return body(unescaped[...])
        }
    }

    /// Whether two strings are the same bytes (names are compared byte for byte after unescaping).
    private func same(_ a: Text, _ b: Text) -> Bool {
        withBytes(a) { a in withBytes(b) { b in a.elementsEqual(b) } }
    }

    /// Reads a string from its opening quote; returns its UTF-8 bytes, unescaped.
    ///
    /// While not ``judging``, control characters are kept, and an unpaired surrogate as its WTF-8
    /// bytes (only to tell member names apart). A string without escapes is returned as its range in
    /// the body: reading one allocates nothing.
    private mutating func string() throws(Failure) -> Text {
        index += 1
        let start = index
        // The unescaped bytes, from the first escape on; nil while the string is its own bytes.
        var text: [UInt8]?
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return text.map { .unescaped($0) } ?? .slice(start..<index - 1)
            case UInt8(ascii: "\\"):
                if text == nil { text = Array(bytes[start..<index]) }
                index += 1
                guard let escape = current else { throw .malformed }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text!.append(escape)
                case UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    if judging { throw .controlCharacter }
                    let controls: [UInt8: UInt8] = [0x62: 0x08, 0x66: 0x0C, 0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09]
                    text!.append(controls[escape]!)
                case UInt8(ascii: "u"):
                    let start = index - 2
                    switch Result(catching: { () throws(Failure) in try unicodeEscape() }) {
                    case .success(let scalar):
                        if judging, isControl(scalar) { throw .controlCharacter }
                        text!.append(contentsOf: String(Character(scalar)).utf8)
                    case .failure(.unpairedSurrogate) where !judging:
                        // Kept as its WTF-8 bytes, which no valid UTF-8 text can equal.
                        index = start + 2
                        let unit = try hex4()
                        text!.append(contentsOf: [0xED, 0xA0 | UInt8((unit >> 6) & 0x1F), 0x80 | UInt8(unit & 0x3F)])
                    case .failure(let failure):
                        throw failure
                    }
                default: throw .malformed
                }
            case 0x00..<0x20: throw .malformed  // RFC 8259: raw C0 controls must be escaped
            case 0x7F where judging: throw .controlCharacter
            case 0x80...:
                let length = try utf8Sequence()
                // C1 controls are U+0080–U+009F: 0xC2 0x80 … 0xC2 0x9F.
                if judging, length == 2, byte == 0xC2, bytes[index + 1] < 0xA0 { throw .controlCharacter }
                text?.append(contentsOf: bytes[index..<index + length])
                index += length
            default:
                text?.append(byte)
                index += 1
            }
        }
        throw .malformed
    }

    private func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw .malformed }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw .malformed
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func unicodeEscape() throws(Failure) -> Unicode.Scalar {
        let first = try hex4()
        switch first {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw .unpairedSurrogate }
            index += 2
            let second = try hex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw .unpairedSurrogate }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        case 0xDC00...0xDFFF:
            throw .unpairedSurrogate
        default:
            return Unicode.Scalar(first)!
        }
    }

    /// The length of the valid UTF-8 sequence at `index` (no overlong forms, no surrogates).
    private func utf8Sequence() throws(Failure) -> Int {
        let lead = bytes[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default: throw .malformed
        }
        guard bytes.count - index >= length else { throw .malformed }
        guard (low...high).contains(bytes[index + 1]) else { throw .malformed }
        for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[index + offset]) { throw .malformed }
        return length
    }
}
