import Foundation
import Testing

@testable import TesseraTokens

/// Arbitrary bytes into every parser: nothing may crash, and nothing but a valid token may verify.
@Suite struct RandomizedInputTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func arbitraryBytesNeverCrashOrVerify(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let verifier = Fixture.verifier()
        let ring = SessionJWTTests.ring
        let valid = Array(Fixture.signed().utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ {}\":,[]\\".utf8)
        for iteration in 0..<5_000 {
            var bytes: [UInt8]
            switch iteration % 4 {
            case 0:  // raw bytes
                bytes = (0..<Int.random(in: 0...600, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            case 1:  // token-shaped text
                bytes = (0..<Int.random(in: 0...600, using: &random)).map { _ in alphabet.randomElement(using: &random)!
                }
            default:  // mutations of a valid token
                bytes = valid
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let position = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: bytes[position] = UInt8.random(in: 0...255, using: &random)
                    case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
                    default: if bytes.count > 1 { bytes.remove(at: position) }
                    }
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if text != Fixture.signed() {
                #expect(throws: TokenError.self, "seed \(seed) iteration \(iteration)") {
                    _ = try verifier.verify(text, now: Fixture.now)
                }
            }
            _ = try? ring.verify(text, now: Fixture.now)
            _ = try? SessionClaims.unverified(from: text)
            _ = Base64URL.decode(text)
            _ = bytes.withUnsafeBytes { StrictJSONReader.value(from: $0) }
            _ = try? JSONWebKeySet(json: bytes)
        }
    }

    @Test func deepNestingDoesNotOverflowTheStack() {
        let deep = Array(repeating: UInt8(ascii: "["), count: 100_000)
        #expect(deep.withUnsafeBytes { StrictJSONReader.value(from: $0) } == nil)
        let token = Fixture.token(header: Fixture.header, payload: String(repeating: "[", count: 3000))
        expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(token, now: Fixture.now) }
    }
}
