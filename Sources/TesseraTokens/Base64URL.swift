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
        guard let outputCount = decodedCount(input.count) else { return nil }
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            valid = decode(bytes: input, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = valid ? outputCount : 0
        }
        return valid ? output : nil
    }

    /// How many bytes `count` characters of unpadded base64url decode to; nil for a length whose
    /// remainder modulo 4 is 1.
    static func decodedCount(_ count: Int) -> Int? {
        let remainder = count % 4
        if remainder == 1 { return nil }
        return count / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
    }

    /// Decodes canonical, unpadded base64url into `output`, which must hold exactly
    /// ``decodedCount(_:)`` bytes; false (with `output` partly written) when `input` is not canonical.
    static func decode(bytes input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let outputCount = decodedCount(input.count), outputCount == output.count else { return false }
        let remainder = input.count % 4
        return decodeTable.withUnsafeBufferPointer { table in
            var i = 0
            var o = 0
            let fullEnd = input.count - remainder
            while i < fullEnd {
                let a = table[Int(input[i])]
                let b = table[Int(input[i + 1])]
                let c = table[Int(input[i + 2])]
                let d = table[Int(input[i + 3])]
                if (a | b | c | d) & 0x80 != 0 { return false }
                let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                output[o] = UInt8(truncatingIfNeeded: n >> 16)
                output[o + 1] = UInt8(truncatingIfNeeded: n >> 8)
                output[o + 2] = UInt8(truncatingIfNeeded: n)
                i += 4
                o += 3
            }
            if remainder == 2 {
                let a = table[Int(input[i])]
                let b = table[Int(input[i + 1])]
                if (a | b) & 0x80 != 0 || b & 0x0F != 0 { return false }
                output[o] = a << 2 | b >> 4
            } else if remainder == 3 {
                let a = table[Int(input[i])]
                let b = table[Int(input[i + 1])]
                let c = table[Int(input[i + 2])]
                if (a | b | c) & 0x80 != 0 || c & 0x03 != 0 { return false }
                output[o] = a << 2 | b >> 4
                output[o + 1] = b << 4 | c >> 2
            }
            return true
        }
    }

    /// The unpadded base64url encoding of `input` as a string, written in place (no intermediate array).
    static func string(_ input: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: encodedCount(input.count)) { encode(input, into: $0) }
    }

    /// How many characters `count` bytes encode to, unpadded.
    static func encodedCount(_ count: Int) -> Int { (count * 4 + 2) / 3 }

    /// Writes the unpadded base64url encoding of `input` into `output` (at least ``encodedCount(_:)``
    /// bytes) and returns how many bytes it wrote.
    @discardableResult
    static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
        alphabet.withUnsafeBufferPointer { alphabet in
            var i = 0
            var o = 0
            while i + 3 <= input.count {
                let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                output[o] = alphabet[Int(n >> 18 & 63)]
                output[o + 1] = alphabet[Int(n >> 12 & 63)]
                output[o + 2] = alphabet[Int(n >> 6 & 63)]
                output[o + 3] = alphabet[Int(n & 63)]
                i += 3
                o += 4
            }
            switch input.count - i {
            case 1:
                let n = UInt32(input[i]) << 16
                output[o] = alphabet[Int(n >> 18 & 63)]
                output[o + 1] = alphabet[Int(n >> 12 & 63)]
                o += 2
            case 2:
                let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                output[o] = alphabet[Int(n >> 18 & 63)]
                output[o + 1] = alphabet[Int(n >> 12 & 63)]
                output[o + 2] = alphabet[Int(n >> 6 & 63)]
                o += 3
            default:
                break
            }
            return o
        }
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
