/// One CBOR data item (RFC 8949) as the App Attest reader returns it.
///
/// Definite lengths only (App Attest objects have no others); tags and floats are kept opaque so that
/// extension data carrying them still reads.
enum CBORValue: Hashable, Sendable {
    case unsigned(UInt64)
    /// The negative integer −1 − n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Entries in the order they were read; keys are distinct.
    case map([CBORMapEntry])
    indirect case tagged(UInt64, CBORValue)
    /// A simple value (20 false, 21 true, 22 null, 23 undefined, or 32…255).
    case simple(UInt8)
    /// A half, single or double float, kept as its raw bits and width in bytes (2, 4 or 8).
    case float(bits: UInt64, width: UInt8)
}

/// One key–value pair of a CBOR map.
struct CBORMapEntry: Hashable, Sendable {
    var key: CBORValue
    var value: CBORValue
}

extension CBORValue {
    /// The value under a text key of a map, or nil (also when `self` is not a map).
    subscript(text key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    /// The value under an integer key of a map, or nil (also when `self` is not a map).
    subscript(int key: Int64) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        let wanted: CBORValue = key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))
        return entries.first { $0.key == wanted }?.value
    }

    /// The bytes of a byte string, or nil.
    var byteString: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// The string of a text string, or nil.
    var textString: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The value of an integer that fits in `Int64`, or nil.
    var integer: Int64? {
        switch self {
        case .unsigned(let n) where n <= UInt64(Int64.max): Int64(n)
        case .negative(let n) where n <= UInt64(Int64.max): -1 - Int64(n)
        default: nil
        }
    }
}
