import Crypto
import Foundation
import TesseraTokens

/// Every decision about App Attest, on every platform: when the installation's key is made, attested
/// or asserted with, what `clientDataHash` covers, and what a failure becomes. The
/// ``AppAttestProvider`` only talks to the device.
///
/// - A start or identify of an installation without an attested key attests one (a new key, or the
///   key made earlier whose attestation Apple's service could not do then); once the server accepted
///   that request, the key is recorded as attested.
/// - Restores and identifies assert with the attested key. A key the device calls invalid (a backup
///   restored onto another device) is replaced by a new key attested in the same request.
/// - A request the server refused because it does not know the key (`attestation_invalid`, reason
///   `key_id`: attested while the project's mode was `off`), because its challenge expired, or (at an
///   identify) because it carried nothing is sent again once with new evidence (``retry(after:sent:atIdentify:)``).
/// - One request with evidence at a time (``AppAttestTurn``): assertions reach the server in the
///   order of their counters.
/// - A device that cannot attest says `{"unsupported": true}`.
/// - A failure on the device's side never fails the request: it goes without evidence, and
///   ``TesseraClient/appAttestStatus`` and the log say why.
struct AppAttestation: Sendable {
    let mode: AppAttestMode
    let provider: any AppAttestProvider
    let keyring: AppAttestKeyring
    let status: StateBroadcaster<AppAttestStatus>
    let log: @Sendable (TesseraLogMessage.Level, String) -> Void
    /// One request with evidence at a time.
    let turn = AppAttestTurn()

    /// Fetches a challenge from the server.
    typealias Challenge = @Sendable () async throws(TesseraError) -> String

    init(configuration: TesseraConfiguration) {
        mode = configuration.appAttest
        provider = configuration.appAttestProvider
        keyring = AppAttestKeyring(configuration: configuration)
        status = StateBroadcaster(configuration.appAttest == .off ? .off : .notAttested)
        let handler = configuration.logHandler
        log = { level, message in handler(TesseraLogMessage(level: level, message: "App Attest: \(message)")) }
    }

    /// The evidence of one start or identify, and the key to record as attested once the server accepts it.
    struct Prepared: Sendable, Equatable {
        var evidence: AppAttestEvidence?
        var attestedKeyID: String?

        /// The key ID of an assertion, when the evidence is one.
        var assertedKeyID: String? {
            if case .assertion(let keyID, _, _) = evidence { return keyID }
            return nil
        }
    }

    /// How to send a refused request again, once.
    struct Retry: Sendable, Equatable {
        /// Attest a new key rather than assert with (or attest again) the current one.
        var newKey: Bool
        /// Send evidence at all (false: a server older than contract 1.5.0 refused an identify's attestation).
        var withEvidence = true
    }

    private enum Failure: Error {
        case device(AppAttestError)
        case challenge(TesseraError)
    }

    /// The SHA-256 an attestation covers: of the challenge's bytes.
    static func attestationHash(challenge: [UInt8]) -> Data {
        Data(SHA256.hash(data: challenge))
    }

    /// The SHA-256 an assertion covers: of the challenge's bytes followed by the UTF-8 installation ID.
    static func assertionHash(challenge: [UInt8], installationID: String) -> Data {
        Data(SHA256.hash(data: challenge + Array(installationID.utf8)))
    }

    /// Publishes what is known of `installationID` before any request (at start).
    func noteInstallation(_ installationID: String) {
        guard mode == .automatic else { return }
        guard provider.isSupported else {
            status.publish(.unsupported)
            return
        }
        if let record = try? keyring.load(), record.installationID == installationID, record.attested {
            status.publish(.attested)
        }
    }

    /// Runs `body` (which prepares evidence and sends its request) in its turn: after every earlier
    /// request with evidence was answered. Without App Attest, at once.
    func inTurn<Value: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws(TesseraError) -> Value
    ) async throws(TesseraError) -> Value {
        guard mode == .automatic else { return try await body() }
        return try await turn.run(waiting: { log(.debug, "waiting for the previous request with evidence") }, body)
    }

    // MARK: Starts and identifies

    /// The evidence for an anonymous start of `installationID`; `newKey` attests a new key even when the
    /// installation has an attested one (the server does not know it).
    func forStart(installationID: String, newKey: Bool, challenge: Challenge) async -> Prepared {
        guard mode == .automatic else { return Prepared() }
        guard provider.isSupported else {
            status.publish(.unsupported)
            return Prepared(evidence: .unsupported)
        }
        let stored: AppAttestKeyring.Record?
        do {
            stored = try keyring.load()
        } catch {
            log(.warning, "the key ID cannot be read now (\(error)); this start goes without evidence")
            return Prepared()
        }
        let mine = stored.flatMap { $0.installationID == installationID ? $0 : nil }
        if !newKey, let mine, mine.attested {
            do {
                return Prepared(
                    evidence: try await assert(keyID: mine.keyID, installationID: installationID, challenge: challenge))
            } catch .device(.invalidKey) {
                log(.warning, "the device says the key cannot be used any more (invalidKey): attesting a new key")
                return await attest(keyID: nil, replacing: stored, installationID: installationID, challenge: challenge)
            } catch {
                return failed(error, keyID: nil, during: "assertion")
            }
        }
        // A key made earlier whose attestation did not happen (Apple's service was unavailable) is
        // attested now, as Apple advises; otherwise a new key.
        let reuse = newKey ? nil : mine?.keyID
        return await attest(keyID: reuse, replacing: stored, installationID: installationID, challenge: challenge)
    }

    /// The server accepted a start or identify that carried `prepared`.
    func succeeded(_ prepared: Prepared, installationID: String?) {
        guard let installationID else {
            if prepared.assertedKeyID != nil { status.publish(.attested) }
            return
        }
        if let keyID = prepared.attestedKeyID {
            do { try keyring.markAttested(keyID: keyID, installationID: installationID) } catch {
                log(.warning, "could not record the attested key (\(error)); the next restore attests again")
            }
            log(.info, "key attested")
            status.publish(.attested)
        } else if prepared.assertedKeyID != nil {
            status.publish(.attested)
        }
    }

    /// The evidence for an identify from `installationID` (nil with the publishable key, which has no
    /// installation to prove): as for a start, an assertion with the installation's attested key, or a
    /// new key's attestation when it has none (attested while the server did not keep it, or invalid).
    func forIdentify(installationID: String?, newKey: Bool, challenge: Challenge) async -> Prepared {
        guard mode == .automatic else { return Prepared() }
        guard let installationID else { return provider.isSupported ? Prepared() : Prepared(evidence: .unsupported) }
        return await forStart(installationID: installationID, newKey: newKey, challenge: challenge)
    }

    /// Whether a request refused with `error` after carrying `prepared` is sent again with new evidence,
    /// and how: at most once per request (the caller keeps count), never in a loop.
    ///
    /// - A challenge that expired on its way (`challenge_invalid`, reason `expired`): a fresh challenge,
    ///   and a new key if the evidence was an attestation (a key is attested once).
    /// - An assertion with a key the server does not know (`attestation_invalid`, reason `key_id`): the
    ///   key is forgotten and a new one attested.
    /// - An identify that carried nothing where the mode requires evidence (`attestation_required`): a
    ///   new key's attestation. (A start that carried nothing failed on the device; trying again would too.)
    /// - An identify's attestation refused as `invalid_request` by a server older than contract 1.5.0:
    ///   the identify goes again without it.
    func retry(after error: TesseraError, sent prepared: Prepared, atIdentify: Bool) -> Retry? {
        guard mode == .automatic else { return nil }
        switch prepared.evidence {
        case .attestation where error.code == .challengeInvalid && error.reason == "expired":
            log(.info, "the challenge expired on its way: attesting a new key with a fresh challenge")
            return Retry(newKey: true)
        case .assertion where error.code == .challengeInvalid && error.reason == "expired":
            log(.info, "the challenge expired on its way: asserting again with a fresh challenge")
            return Retry(newKey: false)
        case .assertion(let keyID, _, _) where TesseraClient.isUnknownKey(error):
            keyUnknownToServer(keyID)
            return Retry(newKey: true)
        case nil where atIdentify && error.code == .attestationRequired && provider.isSupported:
            log(.info, "the server requires evidence: attesting a new key")
            return Retry(newKey: true)
        case .attestation where atIdentify && error.code == .invalidRequest:
            log(.warning, "the server does not take an attestation at identify (before contract 1.5.0): sending none")
            return Retry(newKey: false, withEvidence: false)
        default:
            return nil
        }
    }

    /// The server refused an assertion of `keyID` as a key it does not know: it is forgotten, and the
    /// next start attests a new one.
    func keyUnknownToServer(_ keyID: String) {
        log(.warning, "the server does not know the installation's key: a new key will be attested")
        forget(keyID: keyID)
        status.publish(.notAttested)
    }

    // MARK: Steps

    private func assert(
        keyID: String, installationID: String, challenge: Challenge
    ) async throws(Failure) -> AppAttestEvidence {
        let (text, bytes) = try await fetch(challenge)
        do {
            let assertion = try await provider.generateAssertion(
                keyID, clientDataHash: Self.assertionHash(challenge: bytes, installationID: installationID))
            return .assertion(keyID: keyID, assertion: assertion, challenge: text)
        } catch {
            throw .device(.wrapping(error))
        }
    }

    private func attest(
        keyID reuse: String?, replacing stored: AppAttestKeyring.Record?, installationID: String,
        challenge: Challenge
    ) async -> Prepared {
        var keyID = reuse
        if keyID == nil {
            let made: String
            do { made = try await provider.generateKey() } catch {
                return failed(.device(.wrapping(error)), keyID: nil, during: "key generation")
            }
            let record: AppAttestKeyring.Record
            do {
                record = try keyring.store(
                    .init(installationID: installationID, keyID: made, attested: false), replacing: stored)
            } catch {
                log(.warning, "the key ID cannot be stored now (\(error)); this start goes without evidence")
                return Prepared()
            }
            if record.attested {
                // Another process of this installation attested its key just now: that one asserts.
                do {
                    return Prepared(
                        evidence: try await assert(
                            keyID: record.keyID, installationID: installationID, challenge: challenge))
                } catch {
                    return failed(error, keyID: nil, during: "assertion")
                }
            }
            keyID = record.keyID
        }
        guard let keyID else { return Prepared() }
        do throws(Failure) {
            let (text, bytes) = try await fetch(challenge)
            let object: Data
            do {
                object = try await provider.attestKey(keyID, clientDataHash: Self.attestationHash(challenge: bytes))
            } catch {
                throw Failure.device(.wrapping(error))
            }
            return Prepared(evidence: .attestation(keyID: keyID, object: object, challenge: text), attestedKeyID: keyID)
        } catch {
            return failed(error, keyID: keyID, during: "attestation")
        }
    }

    private func fetch(_ challenge: Challenge) async throws(Failure) -> (String, [UInt8]) {
        let text: String
        do { text = try await challenge() } catch { throw .challenge(error) }
        guard let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw .challenge(TesseraError(.invalidResponse, message: "The challenge is not base64url."))
        }
        return (text, bytes)
    }

    /// What a failure becomes: `unsupported` when the device cannot attest, else no evidence (the key of
    /// an attestation Apple refused for good is forgotten; one its service could not reach is kept).
    private func failed(_ failure: Failure, keyID: String?, during step: String) -> Prepared {
        switch failure {
        case .challenge(let error):
            log(.warning, "no challenge (\(error.code)); the request goes without evidence")
            return Prepared()
        case .device(.featureUnsupported):
            log(.info, "the device cannot attest (featureUnsupported)")
            status.publish(.unsupported)
            return Prepared(evidence: .unsupported)
        case .device(let error):
            log(.warning, "\(step) failed on the device (\(error)); the request goes without evidence")
            if let keyID, error != .serverUnavailable { forget(keyID: keyID) }
            status.publish(.failed(error))
            return Prepared()
        }
    }

    private func forget(keyID: String) {
        do { try keyring.forget(keyID: keyID) } catch {
            log(.warning, "could not forget the key (\(error))")
        }
    }
}
