import Crypto
import Foundation

/// A bounded, thread-safe memo of the P-256 keys that `jwk` headers carried, by their exact
/// coordinates: a key that signs again is not decoded, validated as a point and hashed into its
/// thumbprint again. The key still verifies every proof's signature.
///
/// Only a point that made a valid key is stored, so a bad point is refused every time. The entries
/// are keyed by all 64 bytes of `x` and `y` (never by a hash or a thumbprint prefix), so two keys
/// cannot share one. Attacker-chosen keys cannot make it grow past its capacity: it keeps two
/// generations of at most half the capacity each, and when the newer is full the older is dropped
/// (an entry found in the older is moved into the newer, so keys in use stay).
final class DPoPKeyCache: @unchecked Sendable {
    /// A key and its RFC 7638 thumbprint.
    struct Entry {
        let key: P256.Signing.PublicKey
        let thumbprint: String
    }

    /// The point's coordinates, big-endian, in eight words: compared whole, hashed without a copy.
    struct Coordinates: Hashable {
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

        /// `x` and `y`, 32 bytes each.
        init(x: [UInt8], y: [UInt8]) {
            precondition(x.count == 32 && y.count == 32)
            self.init(point: [0x04] + x + y)
        }

        /// The uncompressed point `0x04 ‖ x ‖ y` (65 bytes).
        init(point: some RandomAccessCollection<UInt8>) {
            precondition(point.count == 65)
            let bytes = point.dropFirst()
            func word(_ start: Int) -> UInt64 {
                var value: UInt64 = 0
                for byte in bytes.dropFirst(start).prefix(8) { value = value << 8 | UInt64(byte) }
                return value
            }
            words = (word(0), word(8), word(16), word(24), word(32), word(40), word(48), word(56))
        }

        static func == (lhs: Coordinates, rhs: Coordinates) -> Bool {
            let (a, b) = (lhs.words, rhs.words)
            return a.0 == b.0 && a.1 == b.1 && a.2 == b.2 && a.3 == b.3 && a.4 == b.4 && a.5 == b.5 && a.6 == b.6
                && a.7 == b.7
        }

        func hash(into hasher: inout Hasher) {
            let w = words
            hasher.combine(w.0)
            hasher.combine(w.1)
            hasher.combine(w.2)
            hasher.combine(w.3)
            hasher.combine(w.4)
            hasher.combine(w.5)
            hasher.combine(w.6)
            hasher.combine(w.7)
        }
    }

    /// The most entries held at once.
    let capacity: Int
    private let generationSize: Int
    private let lock = NSLock()
    private var newer: [Coordinates: Entry] = [:]
    private var older: [Coordinates: Entry] = [:]

    /// Creates a cache of at most `capacity` keys (at least 2).
    init(capacity: Int) {
        self.capacity = max(2, capacity)
        generationSize = self.capacity / 2
    }

    /// The number of keys held (for tests).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return newer.count + older.count
    }

    /// The entry for `coordinates`, if it is held.
    func entry(for coordinates: Coordinates) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        if let entry = newer[coordinates] { return entry }
        guard let entry = older.removeValue(forKey: coordinates) else { return nil }
        insertLocked(entry, for: coordinates)
        return entry
    }

    /// Holds `entry`, the valid key of `coordinates`.
    func insert(_ entry: Entry, for coordinates: Coordinates) {
        lock.lock()
        defer { lock.unlock() }
        insertLocked(entry, for: coordinates)
    }

    private func insertLocked(_ entry: Entry, for coordinates: Coordinates) {
        if newer.count >= generationSize, newer[coordinates] == nil {
            older = newer
            newer = [:]
            newer.reserveCapacity(generationSize)
        }
        newer[coordinates] = entry
    }
}
