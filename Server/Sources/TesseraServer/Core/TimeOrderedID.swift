import Foundation

/// Identifiers that sort by creation time: a prefix, the time in milliseconds as 12 hexadecimal
/// digits, then 96 random bits in base64url (`usr_018f2a6c3b1eXq…`).
///
/// Unique like any random identifier, but the rows a server writes at the same moment land next to
/// each other in every index keyed by the ID (the profiles and sessions tables, the events' ID and
/// profile indexes): an insert touches the right edge of the b-tree, whose page the other inserts
/// of the same transaction share, instead of a random page of its own that the commit must write.
/// An identifier is not a secret; the time it reveals is the record's `created_at`.
enum TimeOrderedID {
    private static let hexadecimal = Array("0123456789abcdef".utf8)
    private static let base64URL = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// A new identifier with `prefix` (`usr_`, `ses_`, `evt_`, `dev_`), made at `now`.
    static func make(prefix: StaticString, now: Date = Date()) -> String {
        var generator = SystemRandomNumberGenerator()
        return make(prefix: prefix, now: now, using: &generator)
    }

    static func make(prefix: StaticString, now: Date, using generator: inout some RandomNumberGenerator) -> String {
        let milliseconds = UInt64(max(0, (now.timeIntervalSince1970 * 1000).rounded(.down)))
        let random = (generator.next() as UInt64, generator.next() as UInt32)
        let length = prefix.utf8CodeUnitCount + 12 + 16
        return String(unsafeUninitializedCapacity: length) { buffer in
            var index = 0
            prefix.withUTF8Buffer {
                for byte in $0 {
                    buffer[index] = byte
                    index += 1
                }
            }
            for shift in stride(from: 44, through: 0, by: -4) {
                buffer[index] = hexadecimal[Int(truncatingIfNeeded: milliseconds >> UInt64(shift)) & 0xf]
                index += 1
            }
            // 96 bits as 16 characters of 6 bits: the 64-bit word, then the 32-bit one.
            var bits = (high: random.0, low: UInt64(random.1) << 32)
            for _ in 0..<16 {
                buffer[index] = base64URL[Int(truncatingIfNeeded: bits.high >> 58)]
                index += 1
                bits = (high: bits.high << 6 | bits.low >> 58, low: bits.low << 6)
            }
            return index
        }
    }
}
