/// Writes a ``CBORValue`` in the shortest form (RFC 8949 §4.2.1 preferred serialization, map order kept).
///
/// The tests build attestation objects with it and the fuzz target checks that what the reader accepts
/// writes back to something it reads as the same value.
enum CBORWriter {
    static func encode(_ value: CBORValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, into: &out)
        return out
    }

    private static func head(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: out.append(type | UInt8(argument))
        case 24...0xFF: out += [type | 24, UInt8(argument)]
        case 0x100...0xFFFF:
            out.append(type | 25)
            append(argument, width: 2, into: &out)
        case 0x1_0000...0xFFFF_FFFF:
            out.append(type | 26)
            append(argument, width: 4, into: &out)
        default:
            out.append(type | 27)
            append(argument, width: 8, into: &out)
        }
    }

    private static func append(_ value: UInt64, width: Int, into out: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    private static func write(_ value: CBORValue, into out: inout [UInt8]) {
        switch value {
        case .unsigned(let n): head(0, n, into: &out)
        case .negative(let n): head(1, n, into: &out)
        case .bytes(let bytes):
            head(2, UInt64(bytes.count), into: &out)
            out += bytes
        case .text(let text):
            head(3, UInt64(text.utf8.count), into: &out)
            out += Array(text.utf8)
        case .array(let elements):
            head(4, UInt64(elements.count), into: &out)
            for element in elements { write(element, into: &out) }
        case .map(let entries):
            head(5, UInt64(entries.count), into: &out)
            for entry in entries {
                write(entry.key, into: &out)
                write(entry.value, into: &out)
            }
        case .tagged(let tag, let inner):
            head(6, tag, into: &out)
            write(inner, into: &out)
        case .simple(let simple):
            if simple < 24 { out.append(0xE0 | simple) } else { out += [0xF8, simple] }
        case .float(let bits, let width):
            let info: UInt8 = width == 2 ? 25 : width == 4 ? 26 : 27
            out.append(0xE0 | info)
            append(bits, width: Int(width == 2 || width == 4 ? width : 8), into: &out)
        }
    }
}
