import Foundation
import Testing

@testable import TesseraTokens

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLength() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("="))
            #expect(Base64URL.decode(encoded) == bytes)
            // Same text as Foundation's encoder, translated to the URL alphabet.
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
        }
    }

    @Test(arguments: [
        "Zm9v=", "Zg==", "Zg=", "Zm9v+", "Zm/v", "Zm+v", " Zm9v", "Zm9v ", "Zm\n9v", "Z", "Zm9vY", "Zh", "Zm9",
        "Zm9vYh",
        "Zm9vYmF", "Zm9vYmE=", "Z!9v", "Zm9v\u{0}",
    ])
    func rejectsNonCanonical(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test func acceptsCanonicalFinalCharacters() {
        #expect(Base64URL.decode("Zg") == [0x66])
        #expect(Base64URL.decode("Zm8") == [0x66, 0x6F])
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
    }

    @Test func everyNonAlphabetByteIsRejected() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for byte in UInt8.min...UInt8.max where !alphabet.contains(byte) {
            let bytes: [UInt8] = [0x41, 0x41, byte, 0x41]
            let rejected = bytes.withUnsafeBytes { Base64URL.decode(bytes: $0) } == nil
            #expect(rejected, "byte \(byte)")
        }
    }
}
