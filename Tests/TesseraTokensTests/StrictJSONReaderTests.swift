import Testing

@testable import TesseraTokens

@Suite struct StrictJSONReaderTests {
    private func read(_ bytes: [UInt8]) -> JSONValue? { bytes.withUnsafeBytes { StrictJSONReader.value(from: $0) } }
    private func read(_ text: String) -> JSONValue? { read(Array(text.utf8)) }

    @Test func readsStrictDocuments() throws {
        let value = try #require(read(#" {"a": [1, -2.5e3, true, false, null], "b": "x\u00e9\ud83d\ude00\n"} "#))
        guard case .object(let object) = value else {
            Issue.record("not an object")
            return
        }
        #expect(object["a"] == .array([.number(1), .number(-2500), .bool(true), .bool(false), .null]))
        #expect(object["b"] == .string("xé😀\n"))
    }

    @Test(arguments: [
        #"{"a":1,}"#, #"[1,]"#, #"{"a":1 "b":2}"#, #"{'a':1}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#,
        #"{"a":+1}"#, #"{"a":1e}"#, #"{"a":NaN}"#, #"{"a":Infinity}"#, #"{"a":1e999}"#, #"{"a":"\x"}"#,
        #"{"a":"\ud800"}"#, #"{"a":"\udc00x"}"#, "{\"a\":\"\t\"}", #"{"a":1}x"#, #"{"a":1} {"#, "", " ",
        #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":1}//"#, #"{/*c*/"a":1}"#, #"{"a":1,"a":2}"#, #"{"a":1,"\u0061":2}"#,
        #"{"a":{"b":1,"b":1}}"#,
    ])
    func rejects(_ text: String) {
        #expect(read(text) == nil)
    }

    @Test func rejectsByteOrderMarkAndInvalidUTF8() {
        #expect(read([0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8)) == nil)
        #expect(read(Array(#"{"a":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)) == nil)  // overlong "/"
        #expect(read(Array(#"{"a":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8)) == nil)  // surrogate
        #expect(read(Array(#"{"a":""#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8)) == nil)  // > U+10FFFF
        #expect(read(Array(#"{"a":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8)) == nil)  // truncated
        #expect(
            read(Array(#"{"a":""#.utf8) + [0xE2, 0x82, 0xAC] + Array(#""}"#.utf8))
                == .object(.init(members: [("a", .string("€"))])))
    }

    @Test func limitsDepth() {
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        let fine = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(read(deep) == nil)
        #expect(read(fine) != nil)
    }

    @Test func duplicateNamesCompareBytesNotCanonicalEquivalence() {
        // "é" precomposed and decomposed are different member names (Swift's == would call them equal).
        let text = "{\"caf\u{E9}\":1,\"cafe\u{301}\":2}"
        guard case .object(let object)? = read(text) else {
            Issue.record("rejected")
            return
        }
        #expect(object.members.count == 2)
    }
}
