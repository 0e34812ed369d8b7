import Crypto
import Foundation
import Testing

@testable import TesseraTokens

/// Tokens minted by PyJWT and by Node's `crypto` verify here; tokens minted here verify with PyJWT.
///
/// `scripts/test` installs PyJWT and sets `TESSERA_INTEROP=1` (and `TESSERA_PYTHON`); a plain
/// `swift test` without them skips this suite rather than pass it vacuously.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["TESSERA_INTEROP"] == "1", "needs scripts/test's Python env"))
struct InteropTests {
    static let directory: URL = {
        var url = URL(fileURLWithPath: #filePath)
        url.deleteLastPathComponent()
        url.deleteLastPathComponent()
        return url.appendingPathComponent("Interop")
    }()

    /// Runs a tool and returns its standard output; fails the test on a non-zero exit.
    ///
    /// It is started with `posix_spawn`, its output written to files, rather than with Foundation's
    /// `Process`, whose `run()` on Linux can crash the test process (swift-corelibs-foundation#5472).
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let files = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-interop-\(UUID())")
        let (outputPath, errorsPath) = (files.path + ".out", files.path + ".err")
        defer {
            for path in [outputPath, errorsPath] { try? FileManager.default.removeItem(atPath: path) }
        }
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t?
        #else
            var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = (["/usr/bin/env", executable] + arguments).map { strdup($0) }
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = (argv + [nil]).withUnsafeBufferPointer { buffer in
            posix_spawn(
                &pid, "/usr/bin/env", &actions, nil, UnsafeMutablePointer(mutating: buffer.baseAddress!), environ)
        }
        guard spawned == 0 else { throw InteropFailure(message: "cannot start \(executable): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            let errorText = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
            throw InteropFailure(
                message: "\(executable) \(arguments.first ?? "") ended with wait status \(status): \(errorText)")
        }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    struct InteropFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static var python: String { ProcessInfo.processInfo.environment["TESSERA_PYTHON"] ?? "python3" }
    static let script = directory.appendingPathComponent("interop.py").path

    let secret = IdentitySecret.generate(kid: "ik_interop")
    let now = Date()
    var exp: String { String(Int(now.timeIntervalSince1970) + 300) }

    func verifier() throws -> IdentityTokenVerifier {
        try IdentityTokenVerifier(
            secrets: [secret], configuration: .init(projectID: "prj_interop", requireAudience: true))
    }

    @Test func pyJWTMintedTokensVerify() throws {
        let token = try Self.run(
            Self.python, [Self.script, "mint", secret.value, secret.kid, "py-user", "prj_interop", exp])
        let claims = try verifier().verify(token, now: now)
        #expect(claims.subject == "py-user")
        #expect(claims.name == "Py Thon")
        #expect(claims.email == "py@example.com")
        // The same token with one MAC bit flipped is refused.
        var bytes = Array(token.utf8)
        bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        expectCode(.invalidSignature) { _ = try verifier().verify(String(decoding: bytes, as: UTF8.self), now: now) }
    }

    @Test func nodeCryptoMintedTokensVerify() throws {
        let token = try Self.run(
            "node",
            [
                Self.directory.appendingPathComponent("mint.mjs").path, secret.value, secret.kid, "node-user",
                "prj_interop", exp,
            ])
        let claims = try verifier().verify(token, now: now)
        #expect(claims.subject == "node-user")
        #expect(claims.name == "Node")
    }

    @Test func tesseraMintedTokensVerifyWithPyJWT() throws {
        let token = IdentityTokenMinter(secret: secret).mint(
            IdentityClaims(
                subject: "swift-user", expiration: now.addingTimeInterval(300), audience: ["prj_interop"],
                issuedAt: now, name: "Ada", email: "ada@example.com")
        )
        let output = try Self.run(Self.python, [Self.script, "verify-identity", secret.value, "prj_interop", token])
        let json = try #require(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let claims = try #require(json["claims"] as? [String: Any])
        #expect(claims["sub"] as? String == "swift-user")
        #expect(claims["exp"] as? Int == Int(now.timeIntervalSince1970) + 300)
        #expect((json["header"] as? [String: Any])?["kid"] as? String == secret.kid)
        // PyJWT refuses it under another secret.
        #expect(throws: InteropFailure.self) {
            _ = try Self.run(
                Self.python, [Self.script, "verify-identity", IdentitySecret.generate().value, "prj_interop", token])
        }
    }

    @Test func dpopProofsVerifyWithPyJWT() throws {
        let key = P256.Signing.PrivateKey()
        let proof = try DPoPProofBuilder.proof(
            signer: key, method: "POST", url: "https://tessera.test/v1/sessions/extend?x=1", accessToken: "tok",
            nonce: "n-1", now: now)
        let output = try Self.run(Self.python, [Self.script, "verify-dpop", proof])
        let json = try #require(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let claims = try #require(json["claims"] as? [String: Any])
        #expect(claims["htm"] as? String == "POST")
        #expect(claims["htu"] as? String == "https://tessera.test/v1/sessions/extend")
        #expect(claims["ath"] as? String == DPoPProof.accessTokenHash(of: "tok"))
        #expect(claims["nonce"] as? String == "n-1")
        #expect(claims["iat"] as? Int == Int(now.timeIntervalSince1970))
        #expect(json["jkt"] as? String == JWKThumbprint.sha256(of: key.publicKey), "PyJWT's RFC 7638 thumbprint")
        // One flipped signature bit and PyJWT refuses it.
        var bytes = Array(proof.utf8)
        bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: InteropFailure.self) {
            _ = try Self.run(Self.python, [Self.script, "verify-dpop", String(decoding: bytes, as: UTF8.self)])
        }
    }

    @Test func sessionJWTsVerifyWithPyJWTAgainstTheJWKS() throws {
        let retired = SessionSigningKey.generate()
        let ring = try SessionKeyRing(signingKey: SessionSigningKey.generate(), retiredKeys: [retired.publicJWK])
        let claims = SessionClaims(
            issuer: "http://127.0.0.1:8080", audience: "prj_interop", subject: "usr_1", sessionID: "ses_1",
            expiration: now.addingTimeInterval(300), issuedAt: now, notBefore: now, kind: "verified", externalID: "u1"
        )
        let jwks = String(decoding: ring.jwks.jsonData(), as: UTF8.self)
        let output = try Self.run(
            Self.python, [Self.script, "verify-session", jwks, claims.issuer, "prj_interop", ring.sign(claims)])
        let json = try #require(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect((json["claims"] as? [String: Any])?["sid"] as? String == "ses_1")
        #expect((json["header"] as? [String: Any])?["typ"] as? String == "session+jwt")
        // A token from the retired key still verifies through the published set.
        let old = try SessionKeyRing(signingKey: retired).sign(claims)
        _ = try Self.run(Self.python, [Self.script, "verify-session", jwks, claims.issuer, "prj_interop", old])
        // A token from a key not in the set does not.
        let stranger = try SessionKeyRing(signingKey: SessionSigningKey.generate(kid: retired.kid)).sign(claims)
        #expect(throws: InteropFailure.self) {
            _ = try Self.run(
                Self.python, [Self.script, "verify-session", jwks, claims.issuer, "prj_interop", stranger])
        }
    }
}
