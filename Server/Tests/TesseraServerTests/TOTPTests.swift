import Foundation
import Testing

@testable import TesseraServer

@Suite("TOTP (RFC 6238) and base32")
struct TOTPTests {
    /// RFC 6238, Appendix B: the SHA-1 test vectors (8 digits) for the ASCII secret
    /// "12345678901234567890", at the Unix times given. Copied from the RFC's table
    /// (https://www.rfc-editor.org/rfc/rfc6238#appendix-B); a 6-digit code is the last 6 digits.
    static let rfc6238SHA1: [(time: Int64, code: String)] = [
        (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
        (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
    ]
    static let rfcSecret = Array("12345678901234567890".utf8)

    @Test("The RFC 6238 SHA-1 vectors, in 8 and in 6 digits")
    func rfcVectors() {
        let totp = TOTP(secret: Self.rfcSecret)
        for vector in Self.rfc6238SHA1 {
            #expect(totp.code(at: vector.time, digits: 8) == vector.code, "at \(vector.time)")
            #expect(totp.code(at: vector.time) == String(vector.code.suffix(6)), "at \(vector.time)")
        }
        #expect(TOTP.step(at: 59) == 1)
        #expect(TOTP.step(at: 1_111_111_109) == 37_037_036)
    }

    @Test("A code is accepted one step early or late, not two, and never for a step already used")
    func window() {
        let totp = TOTP(secret: Self.rfcSecret)
        let time: Int64 = 1_111_111_111
        let step = TOTP.step(at: time)
        #expect(totp.verify(totp.code(at: time), at: time, after: nil) == step)
        #expect(totp.verify(totp.code(step: step - 1), at: time, after: nil) == step - 1)
        #expect(totp.verify(totp.code(step: step + 1), at: time, after: nil) == step + 1)
        #expect(totp.verify(totp.code(step: step - 2), at: time, after: nil) == nil)
        #expect(totp.verify(totp.code(step: step + 2), at: time, after: nil) == nil)
        // Replay: the step accepted last, or an earlier one, is refused.
        #expect(totp.verify(totp.code(at: time), at: time, after: step) == nil)
        #expect(totp.verify(totp.code(step: step - 1), at: time, after: step - 1) == nil)
        #expect(totp.verify(totp.code(step: step + 1), at: time, after: step) == step + 1)
        // Spaces are ignored; anything else that is not 6 digits is refused.
        let code = totp.code(at: time)
        #expect(totp.verify(code.prefix(3) + " " + code.suffix(3), at: time, after: nil) == step)
        #expect(totp.verify("12345", at: time, after: nil) == nil)
        #expect(totp.verify("abcdef", at: time, after: nil) == nil)
        #expect(totp.verify("", at: time, after: nil) == nil)
    }

    @Test("Base32 (RFC 4648 test vectors) round-trips, and the otpauth URI carries the secret")
    func base32AndURI() {
        // RFC 4648, section 10, without padding.
        let vectors = [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base32.decode("mzxw6ytboi======") == Array("foobar".utf8))
        #expect(Base32.decode("MZXW1") == nil)
        let secret = TOTP.generateSecret()
        #expect(secret.count == 20)
        #expect(Base32.decode(Base32.encode(secret)) == secret)
        let uri = TOTP(secret: Self.rfcSecret).uri(issuer: "Tessera Ops", account: "a+b@example.com")
        #expect(
            uri
                == "otpauth://totp/Tessera%20Ops:a%2Bb%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Tessera%20Ops&algorithm=SHA1&digits=6&period=30"
        )
    }
}
