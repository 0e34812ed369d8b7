import Foundation
import Testing

@testable import TesseraServer

/// A generator that returns the same word every time.
private struct ConstantGenerator: RandomNumberGenerator {
    let word: UInt64
    mutating func next() -> UInt64 { word }
}

@Suite("Time-ordered identifiers")
struct TimeOrderedIDTests {
    @Test("Prefix, the milliseconds in 12 hexadecimal digits, 96 random bits in 16 base64url characters")
    func layout() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000.123)
        var zeros = ConstantGenerator(word: 0)
        #expect(TimeOrderedID.make(prefix: "usr_", now: now, using: &zeros) == "usr_018bcfe5687bAAAAAAAAAAAAAAAA")
        var ones = ConstantGenerator(word: .max)
        #expect(TimeOrderedID.make(prefix: "evt_", now: now, using: &ones) == "evt_018bcfe5687b________________")
        // The 64-bit word's first 6 bits, then the 32-bit word's bits after the 64 of the first.
        var pattern = ConstantGenerator(word: 0x8000_0000_0000_0001)
        #expect(TimeOrderedID.make(prefix: "ses_", now: now, using: &pattern) == "ses_018bcfe5687bgAAAAAAAAAEAAAAB")
        #expect(
            TimeOrderedID.make(prefix: "ses_").range(
                of: #"^ses_[0-9a-f]{12}[A-Za-z0-9_-]{16}$"#, options: .regularExpression) != nil)
    }

    @Test("Identifiers made later sort after those made earlier; those of one millisecond are distinct")
    func order() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let ids = (0..<1_000).map {
            TimeOrderedID.make(prefix: "evt_", now: start.addingTimeInterval(Double($0) * 0.002 + 0.0005))
        }
        #expect(ids == ids.sorted())
        let sameMoment = (0..<10_000).map { _ in TimeOrderedID.make(prefix: "usr_", now: start) }
        #expect(Set(sameMoment).count == sameMoment.count)
        #expect(TimeOrderedID.make(prefix: "usr_", now: Date(timeIntervalSince1970: -5)).hasPrefix("usr_000000000000"))
    }
}
