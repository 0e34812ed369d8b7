import Crypto
import Foundation
import TesseraTokens

/// The server's side of sessions bound to a device key (RFC 9449): it verifies a request's DPoP
/// proof against the request, enforces a bound session's key, makes a proof's `jti` single-use for
/// calls that change something, and issues and checks the stateless nonces every node accepts.
///
/// Every decision is here, whatever the surface: the HTTP edge only hands over the request's
/// method, path, `DPoP` header, credential and scheme.
struct DPoPGate: Sendable {
    let store: any TesseraStore
    /// The public base URL; a proof's `htu` is this followed by the request's path.
    let baseURL: String
    let verifier = DPoPProofVerifier(maximumClockSkew: DPoPGate.clockSkewSeconds)
    let nonces: DPoPNonces

    /// How far a proof's `iat` may lie from the server's time, either way.
    static let clockSkewSeconds: TimeInterval = 60

    /// The longest `DPoP` header accepted (the contract's `maxLength`); a longer one is
    /// `dpop_proof_invalid`, whether or not the project binds sessions.
    static let maximumProofLength = 8192

    /// What a request presents for RFC 9449.
    struct Presented: Sendable {
        var method: String
        var path: String
        /// The `DPoP` header, when there is exactly one.
        var proof: String?
        /// The credential in `Authorization`, whatever its scheme (the proof's `ath` covers it).
        var credential: String?
        /// Whether `Authorization` used the `DPoP` scheme rather than `Bearer`.
        var dpopScheme: Bool
    }

    /// The request's proof, verified; nil when it carries none or the project ignores proofs.
    ///
    /// A proof that is present is always checked whole: a bad one is refused even where none is
    /// needed, so a client learns at once that its proofs do not verify.
    func proof(_ presented: Presented, project: ProjectRuntime, now: Date) throws -> DPoPProof? {
        guard project.settings.sessionBinding != .off, let header = presented.proof else { return nil }
        let nonceCheck: ((String) -> Bool)? =
            project.settings.dpopNonceRequired
            ? { nonces.accepts($0, projectID: project.id, now: now) } : nil
        do {
            return try verifier.verify(
                header, method: presented.method, url: baseURL + presented.path, accessToken: presented.credential,
                now: now, nonce: nonceCheck)
        } catch {
            throw error.code == .useDPoPNonce
                ? CoreError.useDPoPNonce(nonces.nonce(projectID: project.id, now: now))
                : CoreError.dpopProofInvalid(error.message)
        }
    }

    /// Checks that a request presenting `session` proves its key: a bound session needs the `DPoP`
    /// scheme and a proof by the key it is bound to.
    func authorize(_ session: SessionRecord, presented: Presented, proof: DPoPProof?, project: ProjectRuntime) throws {
        guard project.settings.sessionBinding != .off, let jkt = session.jkt else { return }
        guard presented.dpopScheme, let proof else {
            throw CoreError.dpopProofRequired(onSession: true)
        }
        guard Self.constantTimeEquals(proof.thumbprint, jkt) else {
            throw CoreError.dpopKeyMismatch
        }
    }

    /// Whether two strings have the same bytes, compared in time that depends only on their lengths
    /// (as ``OpaqueToken/constantTimeEquals(_:_:)``), without copying either into an array: every
    /// bound request compares its proof's thumbprint with its session's.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a.utf8, b.utf8) { difference |= x ^ y }
        return difference == 0
    }

    /// Records the proof's `jti` as used, on every node; `dpop_proof_replayed` when it was used before.
    func consume(_ proof: DPoPProof) async throws {
        let expiresAt = Int64(proof.issuedAt.timeIntervalSince1970) + Int64(Self.clockSkewSeconds) + 1
        guard try await store.useDPoPProof(jkt: proof.thumbprint, jti: proof.tokenID, expiresAt: expiresAt) else {
            throw CoreError.dpopProofReplayed
        }
    }

    /// A fresh nonce to send with a successful answer, when the proof's nonce is near its end.
    func refreshedNonce(for proof: DPoPProof?, project: ProjectRuntime, now: Date) -> String? {
        guard project.settings.dpopNonceRequired, let nonce = proof?.nonce,
            !nonces.isCurrent(nonce, projectID: project.id, now: now)
        else { return nil }
        return nonces.nonce(projectID: project.id, now: now)
    }
}

/// Stateless DPoP nonces (RFC 9449 §8): a time window and a MAC over it and the project, under a key
/// derived from the master key, so every node issues and accepts the same nonces without sharing
/// any state. A nonce is accepted in its window and the next: 5 to 10 minutes.
struct DPoPNonces: Sendable {
    /// The MAC keys, the current master key's first; nonces under any of them are accepted.
    let keys: [SymmetricKey]
    static let windowSeconds: Int64 = 300

    init(masterKeys: MasterKeyring) {
        keys = ([masterKeys.current] + masterKeys.previous).map {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: $0.key, info: Array("tessera dpop nonce v1".utf8), outputByteCount: 32)
        }
    }

    func nonce(projectID: String, now: Date) -> String {
        make(window: Self.window(now), projectID: projectID, key: keys[0])
    }

    func accepts(_ nonce: String, projectID: String, now: Date) -> Bool {
        let current = Self.window(now)
        return [current, current - 1].contains { window in
            keys.contains { key in
                OpaqueToken.constantTimeEquals(
                    Array(nonce.utf8), Array(make(window: window, projectID: projectID, key: key).utf8))
            }
        }
    }

    /// Whether `nonce` is of the current window (not about to expire).
    func isCurrent(_ nonce: String, projectID: String, now: Date) -> Bool {
        keys.contains {
            OpaqueToken.constantTimeEquals(
                Array(nonce.utf8), Array(make(window: Self.window(now), projectID: projectID, key: $0).utf8))
        }
    }

    private static func window(_ now: Date) -> Int64 {
        Int64(now.timeIntervalSince1970.rounded(.down)) / windowSeconds
    }

    private func make(window: Int64, projectID: String, key: SymmetricKey) -> String {
        var message = withUnsafeBytes(of: window.bigEndian) { Array($0) }
        message += Array(projectID.utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return Base64URL.encode(withUnsafeBytes(of: window.bigEndian) { Array($0) } + Array(mac).prefix(18))
    }
}

extension CoreError {
    /// No proof where one is needed: a DPoP challenge on a session credential; a plain refusal of
    /// the request at an anonymous start or identify of a project that requires binding.
    static func dpopProofRequired(onSession: Bool) -> CoreError {
        var error = CoreError(
            .dpopProofRequired,
            onSession
                ? "This session is bound to a device key: send Authorization: DPoP with a DPoP proof."
                : "This project binds every session to a device key: send a DPoP proof.")
        if onSession { error.dpopChallenge = DPoPChallenge() }
        return error
    }

    static func dpopProofInvalid(_ detail: String) -> CoreError {
        var error = CoreError(.dpopProofInvalid, "The DPoP proof is not valid: \(detail)")
        error.dpopChallenge = DPoPChallenge()
        return error
    }

    static var dpopKeyMismatch: CoreError {
        var error = CoreError(.dpopKeyMismatch, "The DPoP proof is signed by another key than the session's.")
        error.dpopChallenge = DPoPChallenge()
        return error
    }

    static var dpopProofReplayed: CoreError {
        var error = CoreError(.dpopProofReplayed, "This DPoP proof has already been used; make a new one.")
        error.dpopChallenge = DPoPChallenge()
        return error
    }

    static func useDPoPNonce(_ nonce: String) -> CoreError {
        var error = CoreError(.useDPoPNonce, "Send the DPoP proof again with the nonce in the DPoP-Nonce header.")
        error.dpopChallenge = DPoPChallenge(nonce: nonce)
        return error
    }
}

/// How a refused request is challenged for a DPoP proof (RFC 9449 §7.1): the HTTP edge answers it as
/// unauthorized with `WWW-Authenticate: DPoP`, and `DPoP-Nonce` when the server requires this nonce.
public struct DPoPChallenge: Sendable, Hashable {
    public var nonce: String?
    public init(nonce: String? = nil) { self.nonce = nonce }
}
