import Crypto
import Foundation
import Testing

@testable import TesseraTokens

/// Wycheproof vectors (C2SP/wycheproof, vendored in `Tests/Vectors/wycheproof`).
@Suite struct WycheproofTests {
    /// Known mislabels in `json_web_signature_test.json`, checked by recomputing the MACs:
    /// 367 and 370 are byte-identical to the valid 357 (C2SP/wycheproof#236); 372 and 373 contain `?`.
    static let overrides: [Int: Bool] = [367: true, 370: true, 372: false, 373: false]

    private static func expectation(_ test: [String: Any]) -> Bool? {
        let id = test["tcId"] as! Int
        if let override = overrides[id] { return override }
        switch test["result"] as! String {
        case "valid": return true
        case "invalid": return false
        default: return nil  // acceptable
        }
    }

    @Test func jwsHS256GroupsAgainstTheIdentityTokenCodec() throws {
        let file = try Wycheproof.load("json_web_signature_test.json")
        var checked = 0
        var seenOverrides = Set<Int>()
        for group in file["testGroups"] as! [[String: Any]] {
            guard let key = group["private"] as? [String: Any], key["kty"] as? String == "oct",
                key["alg"] as? String == "HS256"
            else { continue }
            let keyBytes = try #require(Base64URL.decode(key["k"] as! String))
            let kid = key["kid"] as? String ?? "none"
            let verifier = IdentityTokenVerifier(rawKeys: [(kid, keyBytes)], configuration: .init(projectID: "p"))
            for test in group["tests"] as! [[String: Any]] {
                let id = test["tcId"] as! Int
                if Self.overrides[id] != nil { seenOverrides.insert(id) }
                guard let expected = Self.expectation(test) else { continue }
                let accepted: Bool
                if let jws = test["jws"] as? String {
                    accepted = (try? verifier.verifiedPayload(jws)) != nil
                } else {
                    accepted = false  // JSON serialization is never accepted
                }
                #expect(accepted == expected, "tcId \(id) \(test["comment"] ?? "")")
                checked += 1
            }
        }
        #expect(checked == 17 + 2 + 21)
        #expect(seenOverrides == Set(Self.overrides.keys))
    }

    @Test func jwsES256GroupsAgainstTheSessionJWTVerifier() throws {
        let file = try Wycheproof.load("json_web_signature_test.json")
        var checked = 0
        for group in file["testGroups"] as! [[String: Any]] {
            guard let key = group["public"] as? [String: Any], key["alg"] as? String == "ES256",
                key["kty"] as? String == "EC"
            else { continue }
            let jwk = JSONWebKey(
                kty: "EC", crv: key["crv"] as! String, x: key["x"] as! String, y: key["y"] as! String,
                kid: key["kid"] as! String, use: key["use"] as? String, alg: "ES256"
            )
            let verifier = try ES256Verifier(keys: [jwk])
            for test in group["tests"] as! [[String: Any]] {
                guard let expected = Self.expectation(test) else { continue }
                let accepted =
                    (test["jws"] as? String).flatMap { try? verifier.verifiedPayload($0, requireType: false) } != nil
                #expect(accepted == expected, "tcId \(test["tcId"]!) \(test["comment"] ?? "")")
                checked += 1
            }
        }
        #expect(checked == 15 + 24)
    }

    @Test func hmacSHA256Primitive() throws {
        let file = try Wycheproof.load("hmac_sha256_test.json")
        var full = 0
        var truncated = 0
        for group in file["testGroups"] as! [[String: Any]] {
            let tagSize = group["tagSize"] as! Int
            for test in group["tests"] as! [[String: Any]] {
                let key = Wycheproof.hex(test["key"] as! String)
                let message = Wycheproof.hex(test["msg"] as! String)
                let tag = Wycheproof.hex(test["tag"] as! String)
                if tagSize == 256 {
                    let valid = HMAC<SHA256>.isValidAuthenticationCode(
                        tag, authenticating: message, using: SymmetricKey(data: key))
                    #expect(valid == (test["result"] as! String == "valid"), "tcId \(test["tcId"]!)")
                    full += 1
                } else {
                    // JWS HS256 takes only full 256-bit tags: a truncated tag is refused whatever it is.
                    let verifier = IdentityTokenVerifier(rawKeys: [("k", key)], configuration: .init(projectID: "p"))
                    let token =
                        Base64URL.encode(Array(#"{"alg":"HS256"}"#.utf8)) + "." + Base64URL.encode(message)
                        + "." + Base64URL.encode(tag)
                    if !message.isEmpty && !tag.isEmpty {
                        expectCode(.invalidSignature) { _ = try verifier.verifiedPayload(token) }
                    }
                    truncated += 1
                }
            }
        }
        #expect(full > 0 && truncated > 0)
    }

    @Test func ecdsaP256P1363Primitive() throws {
        let file = try Wycheproof.load("ecdsa_secp256r1_sha256_p1363_test.json")
        var checked = 0
        for group in file["testGroups"] as! [[String: Any]] {
            let publicKey = group["publicKey"] as! [String: Any]
            let key = try P256.Signing.PublicKey(
                x963Representation: Wycheproof.hex(publicKey["uncompressed"] as! String))
            for test in group["tests"] as! [[String: Any]] {
                let result = test["result"] as! String
                guard result != "acceptable" else { continue }
                let signature = Wycheproof.hex(test["sig"] as! String)
                let message = Wycheproof.hex(test["msg"] as! String)
                let valid =
                    signature.count == 64
                    && (try? P256.Signing.ECDSASignature(rawRepresentation: signature)).map {
                        key.isValidSignature($0, for: message)
                    } == true
                #expect(valid == (result == "valid"), "tcId \(test["tcId"]!) \(test["comment"] ?? "")")
                checked += 1
            }
        }
        #expect(checked > 250)
    }

    /// Key-set validity: short HMAC keys, duplicate kids, wrong use, curve, algorithm or point.
    @Test func jsonWebKeySets() throws {
        let file = try Wycheproof.load("json_web_key_test.json")
        var checked = 0
        var unsupported = 0
        var policyRefusals = 0
        for group in file["testGroups"] as! [[String: Any]] {
            let privateSet = (group["private"] as? [String: Any])?["keys"] as? [[String: Any]] ?? []
            let publicSet = group["public"] as? [String: Any]
            let kinds = Set(privateSet.map { $0["kty"] as? String ?? "?" })
            for test in group["tests"] as! [[String: Any]] {
                guard let expected = Self.expectation(test), let jws = test["jws"] as? String else { continue }
                let accepted: Bool
                if kinds == ["oct"] {
                    // Identity secrets: HS256 only, ≥ 32 bytes, distinct kids.
                    let usable = privateSet.allSatisfy {
                        ($0["alg"] as? String ?? "HS256") == "HS256"
                            && (Base64URL.decode($0["k"] as! String)?.count ?? 0) >= 32
                    }
                    let kids = privateSet.map { $0["kid"] as? String ?? "" }
                    if usable && Set(kids).count == kids.count {
                        let keys = privateSet.map { ($0["kid"] as! String, Base64URL.decode($0["k"] as! String)!) }
                        accepted =
                            (try? IdentityTokenVerifier(rawKeys: keys, configuration: .init(projectID: "p"))
                                .verifiedPayload(jws)) != nil
                    } else {
                        accepted = false
                    }
                } else if kinds == ["EC"], let publicSet {
                    let data = try JSONSerialization.data(withJSONObject: publicSet)
                    if let set = try? JSONWebKeySet(json: Array(data)),
                        let verifier = try? ES256Verifier(keys: set.keys)
                    {
                        accepted = (try? verifier.verifiedPayload(jws, requireType: false)) != nil
                    } else {
                        accepted = false
                    }
                } else {
                    // RSA and mixed sets: Tessera accepts neither; such a set never verifies anything.
                    #expect(throws: KeyConfigurationError.self) {
                        try JSONWebKeySet(
                            json: Array(JSONSerialization.data(withJSONObject: publicSet ?? ["keys": privateSet])))
                    }
                    unsupported += 1
                    continue
                }
                let algorithms = Set(privateSet.compactMap { $0["alg"] as? String })
                if expected, !algorithms.isDisjoint(with: ["HS384", "HS512"]) {
                    // Valid JOSE, but identity tokens are HS256 only (the wire contract): refused on purpose.
                    #expect(!accepted, "tcId \(test["tcId"]!)")
                    policyRefusals += 1
                    continue
                }
                #expect(accepted == expected, "tcId \(test["tcId"]!) \(test["comment"] ?? "")")
                checked += 1
            }
        }
        #expect(checked == 17)
        #expect(policyRefusals == 2)
        #expect(unsupported == 7)
    }
}
