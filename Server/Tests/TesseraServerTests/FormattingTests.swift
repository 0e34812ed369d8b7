import Foundation
import Testing

@testable import TesseraServer

@Suite("Response formatting: RFC 3339 times, JSON strings, log lines")
struct FormattingTests {
    @Test("RFC 3339 agrees with Foundation's ISO 8601 formatter from 1970 to 9999")
    func rfc3339MatchesFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime]
        var state: UInt64 = 0x5EED_1234
        var samples: [Int64] = [0, 59, 60, 86_399, 86_400, 951_782_400, 1_709_164_800, 4_102_444_800, 253_402_300_799]
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            samples.append(Int64(state >> 28) % 253_402_300_800)
        }
        for seconds in samples {
            let expected = formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
            #expect(RFC3339.string(seconds) == expected, "\(seconds)")
        }
    }

    @Test("JSON strings: plain ones copied, every control character, quote and backslash escaped")
    func jsonStrings() throws {
        let values = [
            "ses_plain", "", "quote \" and \\ backslash", "line\nbreak\r\ttab", "\u{0}\u{1F}\u{7F}", "naïve 🦊 ✓",
        ]
        for value in values {
            var writer = JSONWriter()
            writer.objectStart()
            writer.field("v", value)
            writer.time("t", 0)
            writer.time("n", nil as Int64?)
            writer.objectEnd()
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
            #expect(object["v"] as? String == value)
            #expect(object["t"] as? String == "1970-01-01T00:00:00Z")
            #expect(object["n"] is NSNull)
            #expect(!writer.bytes.contains(where: { $0 < 0x20 }))
        }
    }

    @Test("Integers are written as JSON numbers, at both ends of Int64 and around every power of ten")
    func integers() throws {
        var values: [Int64] = [0, 1, -1, 9, 10, 11, -10, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var power: Int64 = 10
        while power <= 1_000_000_000_000_000_000 {
            values += [power - 1, power, power + 1, -power, -(power - 1)]
            if power > Int64.max / 10 { break }
            power *= 10
        }
        for value in values {
            var writer = JSONWriter()
            writer.arrayStart()
            writer.integer(value)
            writer.arrayEnd()
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "[\(value)]")
        }
    }

    @Test("Log values: plain when safe, quoted and escaped otherwise")
    func logQuoting() {
        #expect(TesseraLogHandler.quoted("req_123") == "req_123")
        #expect(TesseraLogHandler.quoted("") == "\"\"")
        #expect(TesseraLogHandler.quoted("two words") == "\"two words\"")
        #expect(TesseraLogHandler.quoted("a=b") == "\"a=b\"")
        #expect(TesseraLogHandler.quoted("say \"hi\"\n") == "\"say \\\"hi\\\"\\n\"")
        #expect(TesseraLogHandler.quoted("\u{1}") == "\"\\u{1}\"")
    }
}
