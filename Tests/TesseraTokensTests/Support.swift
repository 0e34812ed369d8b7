import Crypto
import Foundation
import Testing

@testable import TesseraTokens

/// Fixed times and keys, so every test is exact.
enum Fixture {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let projectID = "prj_test"
    static let secret = try! IdentitySecret(kid: "k1", value: "tis_0123456789abcdefghijklmnopqrstuvwxyzABCD")
    static let otherSecret = try! IdentitySecret(kid: "k2", value: "tis_ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkj")

    static func verifier(
        secrets: [IdentitySecret] = [secret],
        requireAudience: Bool = false,
        expectedIssuer: String? = nil,
        leeway: TimeInterval = 60,
        maximumLifetime: TimeInterval = 3600
    ) -> IdentityTokenVerifier {
        try! IdentityTokenVerifier(
            secrets: secrets,
            configuration: .init(
                projectID: projectID,
                projectSlug: "acme",
                requireAudience: requireAudience,
                expectedIssuer: expectedIssuer,
                leeway: leeway,
                maximumLifetime: maximumLifetime
            )
        )
    }

    /// A token with exactly the given header and payload text, MACed with `key`.
    static func token(header: String, payload: String, key: [UInt8] = Array(secret.value.utf8)) -> String {
        token(headerBytes: Array(header.utf8), payloadBytes: Array(payload.utf8), key: key)
    }

    static func token(headerBytes: [UInt8], payloadBytes: [UInt8], key: [UInt8] = Array(secret.value.utf8)) -> String {
        let input = Base64URL.encode(headerBytes) + "." + Base64URL.encode(payloadBytes)
        return input + "." + mac(input, key: key)
    }

    static func mac(_ signingInput: String, key: [UInt8]) -> String {
        Base64URL.encode(
            Array(HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: SymmetricKey(data: key)))
        )
    }

    /// A payload with `sub` and `exp` 300 s ahead plus extra members (raw JSON fragments).
    static func payload(_ extra: String = "", exp: Double = now.timeIntervalSince1970 + 300) -> String {
        #"{"sub":"user-1","exp":\#(exp)"# + (extra.isEmpty ? "" : "," + extra) + "}"
    }

    static let header = #"{"alg":"HS256","typ":"JWT"}"#

    static func signed(_ extra: String = "", exp: Double = now.timeIntervalSince1970 + 300) -> String {
        token(header: header, payload: payload(extra, exp: exp))
    }
}

/// Reads `Tests/Vectors/wycheproof/NAME`, the Wycheproof vectors vendored into the repository.
enum Wycheproof {
    static func load(_ name: String) throws -> [String: Any] {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() }  // Support.swift, TesseraTokensTests
        let file = url.appendingPathComponent("Vectors/wycheproof/\(name)")
        let data = try Data(contentsOf: file)
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func hex(_ text: String) -> [UInt8] { hexBytes(text) }
}

/// Expects `body` to throw a ``TokenError`` with exactly `code`.
func expectCode(
    _ code: TokenError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    let error = #expect(throws: TokenError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
}
