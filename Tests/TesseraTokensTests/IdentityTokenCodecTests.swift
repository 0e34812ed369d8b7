import Crypto
import Foundation
import Testing

@testable import TesseraTokens

/// The JWS layer of identity tokens: structure, base64url, JSON, header rules and the MAC.
@Suite struct IdentityTokenCodecTests {
    /// RFC 7515 Appendix A.1: HS256 with its 64-byte key.
    static let rfcKey = Base64URL.decode(
        "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"
    )!
    static let rfcToken =
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    static func rfcVerifier() -> IdentityTokenVerifier {
        IdentityTokenVerifier(rawKeys: [("rfc", rfcKey)], configuration: .init(projectID: Fixture.projectID))
    }

    @Test func rfc7515AppendixA1SignatureVerifies() throws {
        #expect(Self.rfcKey.count == 64)
        let payload = try Self.rfcVerifier().verifiedPayload(Self.rfcToken)
        #expect(String(decoding: payload, as: UTF8.self).hasPrefix("{\"iss\":\"joe\""))
    }

    @Test func rfc7515AppendixA1IsExpiredAtTheJWTLayer() {
        expectCode(.identityTokenExpired) { _ = try Self.rfcVerifier().verify(Self.rfcToken, now: Date()) }
    }

    @Test func acceptsAValidToken() throws {
        let claims = try Fixture.verifier().verify(Fixture.signed(), now: Fixture.now)
        #expect(claims.subject == "user-1")
        #expect(claims.expiration == Date(timeIntervalSince1970: 1_800_000_300))
    }

    @Test func everySingleByteChangeIsRejectedWithTheRightCode() throws {
        // A minimal header keeps the oracle simple: {"alg":"HS256"}.
        let token = Fixture.token(header: #"{"alg":"HS256"}"#, payload: Fixture.payload())
        let verifier = Fixture.verifier()
        _ = try verifier.verify(token, now: Fixture.now)
        let original = Array(token.utf8)
        var checked = 0
        for position in original.indices {
            for replacement in UInt8.min...UInt8.max where replacement != original[position] {
                var mutated = original
                mutated[position] = replacement
                let text = String(decoding: mutated, as: UTF8.self)
                let expected = Oracle.expectedCode(for: text)
                let error = #expect(throws: TokenError.self) { _ = try verifier.verify(text, now: Fixture.now) }
                #expect(error?.code == expected, "position \(position) byte \(replacement)")
                checked += 1
            }
        }
        #expect(checked == original.count * 255)
    }

    @Test(arguments: ["none", "None", "NONE", "HS512", "HS384", "RS256", "ES256", "hs256", "HS256 ", ""])
    func otherAlgorithmsAreUnsupportedEvenWithAValidHS256MAC(_ alg: String) {
        let token = Fixture.token(header: #"{"alg":"\#(alg)","typ":"JWT"}"#, payload: Fixture.payload())
        expectCode(.unsupportedAlgorithm) { _ = try Fixture.verifier().verify(token, now: Fixture.now) }
    }

    @Test func noneWithAnEmptySignatureIsMalformed() {
        let input =
            Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(Fixture.payload().utf8))
        expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(input + ".", now: Fixture.now) }
    }

    @Test(arguments: [
        #"{"alg":"HS256","alg":"none"}"#, #"{"alg":"none","alg":"HS256"}"#, #"{"alg":"HS256","alg":"HS256"}"#,
    ])
    func duplicateAlgIsMalformed(_ header: String) {
        let token = Fixture.token(header: header, payload: Fixture.payload())
        expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(token, now: Fixture.now) }
    }

    @Test(arguments: [
        #"{"sub":"alice","sub":"mallory","exp":1800000300}"#, #"{"sub":"mallory","sub":"alice","exp":1800000300}"#,
        #"{"sub":"alice","exp":1800000300,"exp":1900000000}"#,
    ])
    func duplicateClaimsAreMalformed(_ payload: String) {
        let token = Fixture.token(header: Fixture.header, payload: payload)
        expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(token, now: Fixture.now) }
    }

    @Test func nonCanonicalBase64URLIsMalformed() {
        let token = Fixture.signed()
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var variants: [String] = []
        for index in 0..<3 {
            func with(_ segment: String) -> String {
                var copy = parts
                copy[index] = segment
                return copy.joined(separator: ".")
            }
            variants.append(with(parts[index] + "="))
            variants.append(with(parts[index] + "=="))
            variants.append(with(" " + parts[index]))
            variants.append(with(parts[index] + "\n"))
            variants.append(
                with(
                    parts[index].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                        + (parts[index].contains(where: { $0 == "-" || $0 == "_" }) ? "" : "+")))
        }
        // Unused trailing bits set in the signature's last character (43 characters: 2 unused bits).
        let signature = parts[2]
        let last = signature.last!
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let value = alphabet.firstIndex(of: last)!
        variants.append(parts[0] + "." + parts[1] + "." + signature.dropLast() + String(alphabet[value | 1]))
        for variant in variants where variant != token {
            expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(variant, now: Fixture.now) }
        }
    }

    @Test func byteOrderMarkTrailingCommaAndInvalidUTF8AreMalformed() {
        let bom = Fixture.token(
            headerBytes: [0xEF, 0xBB, 0xBF] + Array(Fixture.header.utf8), payloadBytes: Array(Fixture.payload().utf8))
        let bomPayload = Fixture.token(
            headerBytes: Array(Fixture.header.utf8), payloadBytes: [0xEF, 0xBB, 0xBF] + Array(Fixture.payload().utf8))
        let trailingComma = Fixture.token(header: Fixture.header, payload: #"{"sub":"a","exp":1800000300,}"#)
        let trailingCommaHeader = Fixture.token(header: #"{"alg":"HS256",}"#, payload: Fixture.payload())
        let overlong = Fixture.token(
            headerBytes: Array(Fixture.header.utf8),
            payloadBytes: Array(#"{"sub":"a"#.utf8) + [0xC0, 0xAF] + Array(#"","exp":1800000300}"#.utf8)
        )
        let notObject = Fixture.token(header: Fixture.header, payload: #"["sub","exp"]"#)
        for token in [bom, bomPayload, trailingComma, trailingCommaHeader, overlong, notObject] {
            expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(token, now: Fixture.now) }
        }
    }

    @Test func segmentCountAndEmptinessAreChecked() {
        let token = Fixture.signed()
        for variant in [
            token + ".", token + ".x", "." + token, "", ".", "..", "a.b", "a..c",
            token.replacingOccurrences(of: ".", with: ""),
        ] {
            expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(variant, now: Fixture.now) }
        }
    }

    @Test func sizeCaps() throws {
        // Payload just under and just over 4 KiB.
        let filler = { (count: Int) in Fixture.payload(#""pad":""# + String(repeating: "x", count: count) + #"""#) }
        let base = filler(0).utf8.count
        let atLimit = Fixture.token(header: Fixture.header, payload: filler(4096 - base))
        _ = try Fixture.verifier().verify(atLimit, now: Fixture.now)
        let overLimit = Fixture.token(header: Fixture.header, payload: filler(4097 - base))
        expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(overLimit, now: Fixture.now) }
        // Header over 1 KiB.
        let bigHeader = #"{"alg":"HS256","x":""# + String(repeating: "y", count: 1020) + #""}"#
        expectCode(.invalidIdentityToken) {
            _ = try Fixture.verifier().verify(
                Fixture.token(header: bigHeader, payload: Fixture.payload()), now: Fixture.now)
        }
        // Whole token over 8 KiB.
        expectCode(.invalidIdentityToken) {
            _ = try Fixture.verifier().verify(String(repeating: "a", count: 8193), now: Fixture.now)
        }
    }

    @Test(arguments: ["crit", "cty", "b64", "jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256"])
    func forbiddenHeaderMembers(_ name: String) {
        let token = Fixture.token(header: #"{"alg":"HS256","\#(name)":"x"}"#, payload: Fixture.payload())
        expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(token, now: Fixture.now) }
    }

    @Test func typMustBeJWTWhenPresent() throws {
        _ = try Fixture.verifier().verify(
            Fixture.token(header: #"{"alg":"HS256"}"#, payload: Fixture.payload()), now: Fixture.now)
        for typ in [#""at+jwt""#, #""session+jwt""#, "1", "null", #""""#] {
            let token = Fixture.token(header: #"{"alg":"HS256","typ":\#(typ)}"#, payload: Fixture.payload())
            expectCode(.invalidIdentityToken) { _ = try Fixture.verifier().verify(token, now: Fixture.now) }
        }
    }

    @Test func kidSelectsItsSecretAndUnknownKidNeverFallsBack() throws {
        let verifier = Fixture.verifier(secrets: [Fixture.secret, Fixture.otherSecret])
        let k2 = Array(Fixture.otherSecret.value.utf8)
        // kid k2, MAC by k2: accepted.
        _ = try verifier.verify(
            Fixture.token(header: #"{"alg":"HS256","kid":"k2"}"#, payload: Fixture.payload(), key: k2), now: Fixture.now
        )
        // kid k1, MAC by k2: refused although k2 is active.
        expectCode(.invalidSignature) {
            _ = try verifier.verify(
                Fixture.token(header: #"{"alg":"HS256","kid":"k1"}"#, payload: Fixture.payload(), key: k2),
                now: Fixture.now)
        }
        // Unknown kid, MAC by an active key: refused.
        expectCode(.invalidSignature) {
            _ = try verifier.verify(
                Fixture.token(header: #"{"alg":"HS256","kid":"k3"}"#, payload: Fixture.payload()), now: Fixture.now)
        }
        // No kid: every active secret is tried (rotation).
        _ = try verifier.verify(
            Fixture.token(header: #"{"alg":"HS256"}"#, payload: Fixture.payload(), key: k2), now: Fixture.now)
        // Malformed kid.
        for kid in [#""""#, #""a b""#, #""\#(String(repeating: "a", count: 65))""#, "7", #""k/1""#] {
            expectCode(.invalidIdentityToken) {
                _ = try verifier.verify(
                    Fixture.token(header: #"{"alg":"HS256","kid":\#(kid)}"#, payload: Fixture.payload()),
                    now: Fixture.now)
            }
        }
    }

    @Test func badSignatureWinsOverExpiry() {
        let expired = Fixture.token(
            header: Fixture.header, payload: Fixture.payload(exp: 1), key: Array(repeating: 7, count: 32))
        expectCode(.invalidSignature) { _ = try Fixture.verifier().verify(expired, now: Fixture.now) }
    }

    @Test func truncatedAndExtendedMACsAreInvalidSignatures() {
        let token = Fixture.signed()
        let parts = token.split(separator: ".").map(String.init)
        let mac = Base64URL.decode(parts[2])!
        for signature in [Array(mac.prefix(16)), Array(mac.prefix(31)), mac + [0], Array(repeating: 0, count: 32)] {
            let variant = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)
            expectCode(.invalidSignature) { _ = try Fixture.verifier().verify(variant, now: Fixture.now) }
        }
    }

    @Test func secretsShorterThan32BytesAreRefused() throws {
        #expect(throws: KeyConfigurationError.self) {
            try IdentitySecret(kid: "k", value: String(repeating: "a", count: 31))
        }
        _ = try IdentitySecret(kid: "k", value: String(repeating: "a", count: 32))
        #expect(throws: KeyConfigurationError.self) {
            try IdentitySecret(kid: "bad kid", value: String(repeating: "a", count: 40))
        }
        let four = (1...4).map { IdentitySecret.generate(kid: "k\($0)") }
        #expect(throws: KeyConfigurationError.self) {
            try IdentityTokenVerifier(secrets: four, configuration: .init(projectID: "p"))
        }
        #expect(throws: KeyConfigurationError.self) {
            try IdentityTokenVerifier(secrets: [four[0], four[0]], configuration: .init(projectID: "p"))
        }
        let generated = IdentitySecret.generate()
        #expect(generated.value.utf8.count >= 32)
        #expect(generated.value.hasPrefix("tis_"))
    }

    @Test func noSecretsRefusesEverything() throws {
        let verifier = try IdentityTokenVerifier(secrets: [], configuration: .init(projectID: "p"))
        expectCode(.invalidSignature) { _ = try verifier.verify(Fixture.signed(), now: Fixture.now) }
    }
}

/// An independent model of the expected code for a mutated token, built on Foundation.
enum Oracle {
    static func canonicalDecode(_ segment: Substring) -> Data? {
        guard !segment.isEmpty,
            segment.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        var standard = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        guard let data = Data(base64Encoded: standard) else { return nil }
        let reencoded = data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return reencoded == segment ? data : nil
    }

    static func expectedCode(for token: String) -> TokenError.Code {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = canonicalDecode(parts[0]), canonicalDecode(parts[1]) != nil,
            let signature = canonicalDecode(parts[2])
        else { return .invalidIdentityToken }
        guard let object = try? JSONSerialization.jsonObject(with: header) as? [String: Any],
            String(data: header, encoding: .utf8) != nil
        else { return .invalidIdentityToken }
        guard let alg = object["alg"] as? String else { return .invalidIdentityToken }
        guard alg == "HS256", alg.utf8.elementsEqual("HS256".utf8) else { return .unsupportedAlgorithm }
        guard signature.count == 32 else { return .invalidSignature }
        return .invalidSignature
    }
}
