/// Strict base64url (RFC 4648 §5) without padding.
///
/// Foundation's `Data(base64Encoded:)` accepts padding, whitespace, the `+` and `/` alphabet and
/// non-zero trailing bits. A token codec that is lenient there accepts many spellings of one token,
/// which breaks replay detection, caching and signature-over-text assumptions. ``decode(_:)`` accepts
/// exactly one spelling of every byte string: the one ``encode(_:)`` produces.
public enum Base64URL {
    /// Encodes bytes as unpadded base64url.
    public static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var output: [UInt8] = []
        Array(bytes).withUnsafeBytes { append($0, to: &output) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the unpadded base64url encoding of `input` to `output` (no intermediate string).
    static func append(_ input: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + (input.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= input.count {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            output.append(alphabet[Int(n >> 18 & 63)])
            output.append(alphabet[Int(n >> 12 & 63)])
            output.append(alphabet[Int(n >> 6 & 63)])
            output.append(alphabet[Int(n & 63)])
            i += 3
        }
        switch input.count - i {
        case 1:
            let n = UInt32(input[i]) << 16
            output.append(alphabet[Int(n >> 18 & 63)])
            output.append(alphabet[Int(n >> 12 & 63)])
        case 2:
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
            output.append(alphabet[Int(n >> 18 & 63)])
            output.append(alphabet[Int(n >> 12 & 63)])
            output.append(alphabet[Int(n >> 6 & 63)])
        default:
            break
        }
    }

    /// Decodes canonical, unpadded base64url.
    ///
    /// Returns `nil` for any character outside `A–Z a–z 0–9 - _`, for padding, for a length whose
    /// remainder modulo 4 is 1, and for a final character whose unused low bits are not zero.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Decodes canonical, unpadded base64url from raw bytes.
    static func decode(bytes input: UnsafeRawBufferPointer) -> [UInt8]? {
        let remainder = input.count % 4
        if remainder == 1 { return nil }
        let outputCount = input.count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            var i = 0
            var o = 0
            let fullEnd = input.count - remainder
            while i < fullEnd {
                let a = decodeTable[Int(input[i])]
                let b = decodeTable[Int(input[i + 1])]
                let c = decodeTable[Int(input[i + 2])]
                let d = decodeTable[Int(input[i + 3])]
                if (a | b | c | d) & 0x80 != 0 {
                    valid = false
                    break
                }
                let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                buffer[o] = UInt8(truncatingIfNeeded: n >> 16)
                buffer[o + 1] = UInt8(truncatingIfNeeded: n >> 8)
                buffer[o + 2] = UInt8(truncatingIfNeeded: n)
                i += 4
                o += 3
            }
            if valid && remainder == 2 {
                let a = decodeTable[Int(input[i])]
                let b = decodeTable[Int(input[i + 1])]
                if (a | b) & 0x80 != 0 || b & 0x0F != 0 {
                    valid = false
                } else {
                    buffer[o] = a << 2 | b >> 4
                    o += 1
                }
            } else if valid && remainder == 3 {
                let a = decodeTable[Int(input[i])]
                let b = decodeTable[Int(input[i + 1])]
                let c = decodeTable[Int(input[i + 2])]
                if (a | b | c) & 0x80 != 0 || c & 0x03 != 0 {
                    valid = false
                } else {
                    buffer[o] = a << 2 | b >> 4
                    buffer[o + 1] = b << 4 | c >> 2
                    o += 2
                }
            }
            initialized = valid ? o : 0
        }
        return valid ? output : nil
    }

    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()
}
