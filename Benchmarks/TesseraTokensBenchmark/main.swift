// Times identity-token verification against a bare HMAC-SHA256 over the same signing input, in one
// run, and prints both with their ratio. Also times the session-JWT operations a heartbeat performs.
//
//     swift run -c release TesseraTokensBenchmark
//
// Every figure is this thread's CPU time per call (not the wall clock), the median of interleaved rounds.
//
// Target: verification within 3× the bare HMAC.
import Crypto
import Foundation
import TesseraTokens

let now = Date()
let secret = IdentitySecret.generate(kid: "ik_bench")
let token = IdentityTokenMinter(secret: secret).mint(
    IdentityClaims(
        subject: "user_2f9c1e7a-4b8d-4c3e-9a51-7d2b0e6f8a13",
        expiration: now.addingTimeInterval(300),
        audience: ["prj_benchmark"],
        issuedAt: now,
        email: "ada.lovelace@example.com"
    )
)
let verifier = try IdentityTokenVerifier(secrets: [secret], configuration: .init(projectID: "prj_benchmark"))
_ = try verifier.verify(token, now: now)  // must be valid

let signingInput = Array(token.utf8[..<token.utf8.lastIndex(of: UInt8(ascii: "."))!])
let key = SymmetricKey(data: Array(secret.value.utf8))

print("TesseraTokens benchmark (median of interleaved rounds; release build expected)")
print("identity token: \(token.utf8.count) bytes, 5 claims (sub, aud, exp, iat, email), HS256 with kid")
print("")

let figures = measureInterleaved(
    iterations: 10_000,
    [
        { blackHole(HMAC<SHA256>.authenticationCode(for: signingInput, using: key)) },
        { blackHole(try? verifier.verify(token, now: now)) },
    ]
)
let (hmac, verify) = (figures[0], figures[1])
print("bare HMAC-SHA256 over the signing input   \(format(hmac))   (reference)")
print(
    "IdentityTokenVerifier.verify              \(format(verify))   \(String(format: "%.2f×", verify / hmac)) the bare HMAC (target ≤ 3×)"
)

let ring = try SessionKeyRing(signingKey: SessionSigningKey.generate())
let claims = SessionClaims(
    issuer: "http://127.0.0.1:8080", audience: "prj_benchmark", subject: "usr_x", sessionID: "ses_x",
    expiration: now.addingTimeInterval(300), issuedAt: now, notBefore: now, kind: "verified", externalID: "user_1"
)
let sessionJWT = ring.sign(claims)
let sessionFigures = measureInterleaved(
    rounds: 11,
    iterations: 1_000,
    [
        { blackHole(ring.sign(claims)) },
        { blackHole(try? ring.verify(sessionJWT, now: now)) },
        { blackHole(OpaqueToken.sha256("st_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")) },
    ]
)
let (sign, verifyES, digest) = (sessionFigures[0], sessionFigures[1], sessionFigures[2])
print("")
print("session JWT ES256 sign                    \(format(sign))")
print("session JWT ES256 verify                  \(format(verifyES))")
print("session token SHA-256 digest              \(format(digest))")

// The signature every realistic heartbeat pays (no session twice in a second, so no shared JWT):
// ES256 as the session JWT is signed today, beside Ed25519 (EdDSA, RFC 8037) over the same signing
// input with the same library — the alternative a project could choose if it signed faster here.
let sessionSigningInput = Array(sessionJWT.utf8[..<sessionJWT.utf8.lastIndex(of: UInt8(ascii: "."))!])
let p256Key = P256.Signing.PrivateKey()
let ed25519Key = Curve25519.Signing.PrivateKey()
let signatureFigures = measureInterleaved(
    rounds: 11,
    iterations: 1_000,
    [
        { blackHole(try? p256Key.signature(for: sessionSigningInput)) },
        { blackHole(try? ed25519Key.signature(for: sessionSigningInput)) },
    ]
)
let (es256, eddsa) = (signatureFigures[0], signatureFigures[1])
print("")
print("signature over a session JWT's signing input (\(sessionSigningInput.count) bytes), swift-crypto:")
print("ES256 (P-256, SHA-256)                    \(format(es256))   (reference)")
print(
    "EdDSA (Ed25519)                           \(format(eddsa))   \(String(format: "%.2f×", eddsa / es256)) ES256"
)

// A DPoP proof (RFC 9449) as a bound heartbeat presents it: verified by DPoPProofVerifier (the JWS,
// the jwk header, every claim, ath over the session token), beside a bare P-256 verify of the same
// proof's signature over its signing input, and the proof's creation on the device (software key).
let deviceKey = P256.Signing.PrivateKey()
let proofURL = "https://tessera.example/v1/sessions/heartbeat"
let sessionToken = "st_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
let proof = try DPoPProofBuilder.proof(
    signer: deviceKey, method: "POST", url: proofURL, accessToken: sessionToken, now: now)
// Two verifiers: one that keeps no key (each proof's jwk read, validated and hashed anew: the
// realistic heartbeat, where each device's key comes back only minutes later) and one whose key
// cache holds this key (a device sending several requests in a row).
let proofVerifier = DPoPProofVerifier(keyCacheCapacity: 0)
let cachingVerifier = DPoPProofVerifier()
_ = try proofVerifier.verify(proof, method: "POST", url: proofURL, accessToken: sessionToken, now: now)
_ = try cachingVerifier.verify(proof, method: "POST", url: proofURL, accessToken: sessionToken, now: now)
let proofSigningInput = Array(proof.utf8[..<proof.utf8.lastIndex(of: UInt8(ascii: "."))!])
let proofSignature = try deviceKey.signature(for: proofSigningInput)
let proofFigures = measureInterleaved(
    rounds: 11,
    iterations: 1_000,
    [
        { blackHole(deviceKey.publicKey.isValidSignature(proofSignature, for: proofSigningInput)) },
        {
            blackHole(
                try? proofVerifier.verify(proof, method: "POST", url: proofURL, accessToken: sessionToken, now: now))
        },
        {
            blackHole(
                try? cachingVerifier.verify(proof, method: "POST", url: proofURL, accessToken: sessionToken, now: now))
        },
        {
            blackHole(
                try? DPoPProofBuilder.proof(
                    signer: deviceKey, method: "POST", url: proofURL, accessToken: sessionToken, now: now))
        },
    ]
)
let (bareVerify, proofVerify, cachedVerify, proofBuild) = (
    proofFigures[0], proofFigures[1], proofFigures[2], proofFigures[3]
)
print("")
print("DPoP proof (\(proof.utf8.count) bytes, ES256, jwk header, ath):")
print("bare P-256 verify of its signature        \(format(bareVerify))   (reference)")
print(
    "DPoPProofVerifier.verify, key read anew   \(format(proofVerify))   \(String(format: "%.2f×", proofVerify / bareVerify)) the bare verify"
)
print(
    "DPoPProofVerifier.verify, key cached      \(format(cachedVerify))   \(String(format: "%.2f×", cachedVerify / bareVerify)) the bare verify"
)
print("DPoPProofBuilder.proof (software key)     \(format(proofBuild))")
