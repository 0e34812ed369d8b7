import TesseraAttest

/// A project's App Attest setting (`app_attest`): how strictly starts and identifies must prove they
/// come from the project's genuine app on a genuine Apple device.
public struct AppAttestSettings: Sendable, Hashable {
    /// How the server acts on what a request proves.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Nothing is verified (the default).
        case off
        /// Everything is verified and recorded; nothing is refused.
        case monitor
        /// New installations must attest; restores and identifies are only verified and recorded.
        case enforceNew = "enforce_new"
        /// New installations must attest, and restores and identifies must assert.
        case enforce
    }

    public var mode: Mode = .off
    /// The accepted app IDs, `TEAMID.bundle.id`.
    public var appIDs: [String] = []
    /// The environment attested keys must come from.
    public var environment: AppAttestEnvironment = .production
    /// Whether devices that cannot attest (the SDK says `unsupported`) pass under `monitor` rules.
    public var allowUnsupported = false

    public init() {}
}

/// Decides, for one start or identify, whether App Attest lets it through, the verdict to record for
/// the installation, and whether `enforce` would have refused it (what `monitor` reports).
///
/// Pure: the caller verifies the evidence first (``AppAttestOutcome``) and knows whether the
/// installation is new and already has a key. It rolls App Attest out without lockouts: only the
/// gates a mode names can refuse, and everything else is recorded.
struct AppAttestPolicy: Sendable {
    var settings: AppAttestSettings

    /// The request being gated.
    enum Gate: Sendable, Hashable {
        /// An anonymous start that creates the installation.
        case newInstallation
        /// An anonymous start of an existing installation (a restore).
        case restore
        /// An identify from an installation.
        case identify
    }

    /// What the evidence of a request came to, once verified.
    enum Outcome: Sendable, Hashable {
        /// No attestation or assertion was sent.
        case absent
        /// The SDK says the device cannot attest (simulators, some Macs).
        case unsupported
        /// A valid attestation: the key is new for the installation.
        case attested
        /// A valid assertion with the installation's stored key, its counter raised.
        case asserted
        /// The verifier refused the evidence with this reason.
        case failed(AppAttestError.Reason)
        /// The challenge is unknown or used (or not 32 bytes).
        case challengeInvalid
        /// The challenge was issued but expired before it came back.
        case challengeExpired
    }

    /// The verdict recorded for an installation (admin lookups, the console, the metric's label).
    enum Verdict: Sendable, Hashable, CustomStringConvertible {
        case attested
        case unattested
        case failed(AppAttestError.Reason)
        case unsupported

        /// The metric label: `attested`, `unattested`, `failed` or `unsupported`.
        var label: String {
            switch self {
            case .attested: "attested"
            case .unattested: "unattested"
            case .failed: "failed"
            case .unsupported: "unsupported"
            }
        }

        /// As operators read it: `failed: nonce` for a failure.
        var description: String {
            if case .failed(let reason) = self { return "failed: \(reason.rawValue)" }
            return label
        }
    }

    /// Why a request is refused.
    enum Refusal: Sendable, Hashable {
        /// `attestation_required`: the gate needs evidence and none (or `unsupported`) came.
        case attestationRequired
        /// `attestation_invalid`, with the reason as `error.reason`.
        case attestationInvalid(AppAttestError.Reason)
        /// `challenge_invalid`: the challenge is unknown or used.
        case challengeInvalid
        /// `challenge_invalid` with reason `expired`: the client may ask for a new challenge and retry.
        case challengeExpired
    }

    struct Decision: Sendable, Hashable {
        /// Nil when the request goes through.
        var refusal: AppAttestPolicy.Refusal?
        /// Nil when the mode is `off` (nothing is verified or recorded).
        var verdict: AppAttestPolicy.Verdict?
        /// Whether `enforce` (with the same `allow_unsupported`) would have refused this request.
        var enforceWouldRefuse: Bool
    }

    /// Whether the server verifies evidence at all (every mode but `off`).
    var verifies: Bool { settings.mode != .off }

    /// Whether `mode` requires evidence at `gate`.
    static func requires(_ mode: AppAttestSettings.Mode, at gate: Gate) -> Bool {
        switch (mode, gate) {
        case (.off, _), (.monitor, _): false
        case (.enforceNew, .newInstallation): true
        case (.enforceNew, _): false
        case (.enforce, _): true
        }
    }

    func decide(_ gate: Gate, _ outcome: Outcome) -> Decision {
        guard verifies else { return Decision(refusal: nil, verdict: nil, enforceWouldRefuse: false) }
        let verdict: Verdict
        let refusal: Refusal?
        switch outcome {
        case .attested, .asserted:
            verdict = .attested
            refusal = nil
        case .absent:
            verdict = .unattested
            refusal = .attestationRequired
        case .unsupported:
            verdict = .unsupported
            refusal = settings.allowUnsupported ? nil : .attestationRequired
        case .failed(let reason):
            verdict = .failed(reason)
            refusal = .attestationInvalid(reason)
        case .challengeInvalid:
            verdict = .failed(.challenge)
            refusal = .challengeInvalid
        case .challengeExpired:
            verdict = .failed(.challenge)
            refusal = .challengeExpired
        }
        return Decision(
            refusal: Self.requires(settings.mode, at: gate) ? refusal : nil,
            verdict: verdict,
            enforceWouldRefuse: Self.requires(.enforce, at: gate) && refusal != nil
        )
    }
}
