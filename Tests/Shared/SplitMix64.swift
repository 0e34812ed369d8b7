import Foundation

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator, so every randomized
/// run is reproducible from its seed alone. One copy for every test target: the others link this file.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private(set) var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform index in `0 ..< count` (count > 0).
    mutating func index(_ count: Int) -> Int {
        Int(next(upperBound: UInt64(count)))
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool {
        Double(next() >> 11) / Double(1 << 53) < p
    }

    /// A uniform double in `0 ..< 1`.
    mutating func unit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}

extension UInt64 {
    /// `0x` and 16 hex digits: how seeds are printed and read back.
    var seedText: String {
        let digits = String(self, radix: 16)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Parses `0x…` hex or a decimal seed.
    init?(seedText text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("0x") || trimmed.hasPrefix("0X") {
            guard let value = UInt64(trimmed.dropFirst(2), radix: 16) else { return nil }
            self = value
        } else {
            guard let value = UInt64(trimmed) else { return nil }
            self = value
        }
    }
}
