import Crypto
import Foundation
import TesseraAttest
import TesseraTokens
import X509

/// Verifies the App Attest evidence of anonymous starts and identifies, decides with
/// ``AppAttestPolicy`` whether each goes through, and records each installation's verdict.
///
/// Challenges and counters live in the store, so both are single-use across nodes: a challenge is
/// spent by one atomic delete, and an assertion's counter is raised only if it still exceeds the
/// stored one (decided on the locked row on PostgreSQL).
struct AppAttestGate: Sendable {
    /// The length of a challenge in bytes.
    static let challengeBytes = 32
    /// How long a challenge may be used.
    static let challengeLifetimeSeconds: Int64 = 300

    let store: any TesseraStore
    let metrics: ServerMetrics
    /// The roots attestation chains must lead to: Apple's App Attestation Root CA unless a test says otherwise.
    let trustAnchors: [Certificate]

    /// What a start or identify proved, to record once it succeeded.
    struct Check: Sendable {
        var decision: AppAttestPolicy.Decision
        /// The key a valid attestation brought.
        var key: AppAttestKeyRecord?
        /// Passed as a restore with evidence a new installation would not pass: the start must not
        /// create the installation if it is gone by then (``AnonymousStart/refusesNewInstallation``).
        var restoreOnly = false
    }

    /// Makes a single-use challenge of the project, valid for five minutes from `now`.
    func issueChallenge(projectID: String, now: Int64) async throws -> (challenge: String, expiresAt: Int64) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<Self.challengeBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let expiresAt = now + Self.challengeLifetimeSeconds
        try await store.createAppAttestChallenge(
            projectID: projectID, challengeHash: Array(SHA256.hash(data: bytes)), expiresAt: expiresAt)
        return (Base64URL.encode(bytes), expiresAt)
    }

    /// Gates an anonymous start (a new installation or a restore); nil when the project's mode is `off`.
    /// Throws the refusal when the mode requires evidence that did not come or did not verify.
    func checkStart(
        _ evidence: AppAttestEvidence?, settings: AppAttestSettings, projectID: String, installationID: String,
        now: Date
    ) async throws -> Check? {
        guard settings.mode != .off else { return nil }
        let state = try await store.appAttestState(projectID: projectID, installationID: installationID)
        return try await check(
            evidence, gate: state.installationExists ? .restore : .newInstallation, settings: settings,
            projectID: projectID, installationID: installationID, stored: state.record?.key, now: now)
    }

    /// Gates an identify from `installationID` (the caller's installation, nil for a publishable-key
    /// caller, which has no key to assert with); nil when the project's mode is `off`.
    ///
    /// An identify may attest a new key for its installation, as a restore may: an installation whose
    /// key the server never stored (attested while the mode was `off`) or that the device called
    /// invalid proves itself at its next identify instead of being locked out, identified or not.
    func checkIdentify(
        _ evidence: AppAttestEvidence?, settings: AppAttestSettings, projectID: String, installationID: String?,
        now: Date
    ) async throws -> Check? {
        guard settings.mode != .off else { return nil }
        var stored: AppAttestKeyRecord?
        if let installationID {
            stored = try await store.appAttestState(projectID: projectID, installationID: installationID).record?.key
        }
        return try await check(
            evidence, gate: .identify, settings: settings, projectID: projectID, installationID: installationID,
            stored: stored, now: now)
    }

    /// Records the verdict of a start or identify that succeeded (and the key of its attestation).
    /// An installation the start created gets a fresh record: no key it did not attest itself.
    func record(
        _ check: Check?, projectID: String, installationID: String?, createdInstallation: Bool, now: Int64
    ) async throws {
        guard let check, let installationID, let verdict = check.decision.verdict else { return }
        try await store.recordAppAttestVerdict(
            AppAttestVerdictWrite(
                projectID: projectID, installationID: installationID, verdict: verdict.description,
                enforceWouldRefuse: check.decision.enforceWouldRefuse, key: check.key,
                replacesKey: createdInstallation, now: now))
    }

    private func check(
        _ evidence: AppAttestEvidence?, gate: AppAttestPolicy.Gate, settings: AppAttestSettings, projectID: String,
        installationID: String?, stored: AppAttestKeyRecord?, now: Date
    ) async throws -> Check {
        let verifier = AppAttestVerifier(
            appIDs: settings.appIDs, environment: settings.environment, trustAnchors: trustAnchors)
        var key: AppAttestKeyRecord?
        let outcome: AppAttestPolicy.Outcome
        switch evidence {
        case nil:
            outcome = .absent
        case .unsupported:
            outcome = .unsupported
        case .attestation(let keyID, let object, let challenge):
            if let refused = try await spend(challenge, projectID: projectID, now: now) {
                outcome = refused
            } else if installationID == nil {
                // An identify with the publishable key has no installation to keep the key for.
                outcome = .failed(.keyID)
            } else if let keyID, let object, let challenge {
                do {
                    let attested = try await verifier.verifyAttestation(
                        object, keyID: keyID, clientDataHash: AppAttestClientData.attestationHash(challenge: challenge),
                        at: now)
                    key = AppAttestKeyRecord(
                        keyID: attested.keyID, publicKey: attested.publicKey, counter: Int64(attested.counter),
                        environment: attested.environment.rawValue, appID: attested.appID, receipt: attested.receipt,
                        attestedAt: CredentialResolver.seconds(now))
                    outcome = .attested
                } catch {
                    outcome = .failed(error.reason)
                }
            } else {
                outcome = .failed(.format)
            }
        case .assertion(let keyID, let assertion, let challenge):
            if let refused = try await spend(challenge, projectID: projectID, now: now) {
                outcome = refused
            } else if let keyID, let assertion, let challenge {
                outcome = try await assert(
                    assertion, keyID: keyID, challenge: challenge, verifier: verifier, stored: stored,
                    projectID: projectID, installationID: installationID)
            } else {
                outcome = .failed(.format)
            }
        }
        let policy = AppAttestPolicy(settings: settings)
        let decision = policy.decide(gate, outcome)
        metrics.appAttestChecked(gate: gate, decision: decision, projectID: projectID)
        switch decision.refusal {
        case nil:
            // The installation the restore was judged on may be deleted before the start's
            // transaction; the start then learns whether it may create one in its place.
            let restoreOnly = gate == .restore && policy.decide(.newInstallation, outcome).refusal != nil
            return Check(decision: decision, key: key, restoreOnly: restoreOnly)
        case .attestationRequired: throw CoreError.attestationRequired
        case .attestationInvalid(let reason): throw CoreError.attestationInvalid(reason: reason.rawValue)
        case .challengeInvalid: throw CoreError.challengeInvalid
        case .challengeExpired: throw CoreError.challengeExpired
        }
    }

    /// Spends a challenge; nil when it was valid, else the outcome of a challenge that does not decode,
    /// is unknown or used (``AppAttestPolicy/Outcome/challengeInvalid``) or expired.
    private func spend(_ challenge: [UInt8]?, projectID: String, now: Date) async throws -> AppAttestPolicy.Outcome? {
        guard let challenge else { return .challengeInvalid }
        switch try await store.consumeAppAttestChallenge(
            projectID: projectID, challengeHash: Array(SHA256.hash(data: challenge)),
            now: CredentialResolver.seconds(now))
        {
        case .spent: return nil
        case .expired: return .challengeExpired
        case .unknown: return .challengeInvalid
        }
    }

    /// Verifies an assertion with the installation's stored key, then raises its stored counter (the
    /// conditional update refuses a counter that another request, on any node, already reached).
    private func assert(
        _ assertion: [UInt8], keyID: [UInt8], challenge: [UInt8], verifier: AppAttestVerifier,
        stored: AppAttestKeyRecord?, projectID: String, installationID: String?
    ) async throws -> AppAttestPolicy.Outcome {
        guard let installationID, let stored, stored.keyID == keyID else { return .failed(.keyID) }
        let counter: UInt32
        do {
            counter = try verifier.verifyAssertion(
                assertion,
                clientDataHash: AppAttestClientData.assertionHash(challenge: challenge, installationID: installationID),
                publicKey: stored.publicKey, previousCounter: UInt32(clamping: stored.counter))
        } catch {
            return .failed(error.reason)
        }
        guard
            try await store.advanceAppAttestCounter(
                projectID: projectID, installationID: installationID, keyID: keyID, counter: Int64(counter))
        else { return .failed(.counter) }
        return .asserted
    }
}
