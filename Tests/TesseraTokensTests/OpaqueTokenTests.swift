import Testing

@testable import TesseraTokens

@Suite struct OpaqueTokenTests {
    @Test func shapesAndEntropy() {
        let token = OpaqueToken.sessionToken()
        #expect(token.hasPrefix("st_"))
        #expect(Base64URL.decode(token.dropFirst(3))?.count == 32)
        #expect(Base64URL.decode(OpaqueToken.installationSecret())?.count == 32)
        #expect(OpaqueToken.publishableKey().hasPrefix("pk_"))
        #expect(OpaqueToken.secretKey().hasPrefix("sk_"))
        #expect(Base64URL.decode(OpaqueToken.identifier(prefix: "usr_").dropFirst(4))?.count == 16)
        let many = Set((0..<1000).map { _ in OpaqueToken.sessionToken() })
        #expect(many.count == 1000)
    }

    @Test func deterministicWithAGivenGenerator() {
        struct Counter: RandomNumberGenerator {
            var value: UInt64 = 0
            mutating func next() -> UInt64 {
                value &+= 1
                return value
            }
        }
        var a = Counter()
        var b = Counter()
        #expect(OpaqueToken.generate(prefix: "x_", using: &a) == OpaqueToken.generate(prefix: "x_", using: &b))
    }

    @Test func digestsAndComparison() {
        // SHA-256("abc")
        #expect(
            OpaqueToken.sha256("abc")
                == Wycheproof.hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        )
        let a = OpaqueToken.sha256("st_a")
        #expect(OpaqueToken.constantTimeEquals(a, OpaqueToken.sha256("st_a")))
        #expect(!OpaqueToken.constantTimeEquals(a, OpaqueToken.sha256("st_b")))
        #expect(!OpaqueToken.constantTimeEquals(a, Array(a.dropLast())))
        #expect(OpaqueToken.constantTimeEquals([], []))
    }
}
