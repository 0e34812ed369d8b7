import TesseraAttest
import Testing

@testable import TesseraServer

/// The App Attest rollout rules: only the gates a mode names refuse; everything else is recorded.
@Suite("App Attest policy: rollout without lockouts")
struct AppAttestPolicyTests {
    typealias Policy = AppAttestPolicy

    static let gates: [Policy.Gate] = [.newInstallation, .restore, .identify]
    static let outcomes: [Policy.Outcome] = [
        .absent, .unsupported, .attested, .asserted, .failed(.nonce), .failed(.counter), .challengeInvalid,
    ]

    static func policy(_ mode: AppAttestSettings.Mode, allowUnsupported: Bool = false) -> Policy {
        var settings = AppAttestSettings()
        settings.mode = mode
        settings.allowUnsupported = allowUnsupported
        return Policy(settings: settings)
    }

    @Test("off verifies nothing, records nothing and refuses nothing")
    func off() {
        let policy = Self.policy(.off)
        #expect(!policy.verifies)
        for gate in Self.gates {
            for outcome in Self.outcomes {
                #expect(policy.decide(gate, outcome) == .init(refusal: nil, verdict: nil, enforceWouldRefuse: false))
            }
        }
    }

    @Test("monitor refuses nothing, records every verdict and what enforce would have refused")
    func monitor() {
        let policy = Self.policy(.monitor)
        for gate in Self.gates {
            for outcome in Self.outcomes {
                let decision = policy.decide(gate, outcome)
                #expect(decision.refusal == nil)
                #expect(decision.verdict != nil)
                let good = outcome == .attested || outcome == .asserted
                #expect(decision.enforceWouldRefuse == !good)
            }
        }
        #expect(policy.decide(.restore, .failed(.counter)).verdict == .failed(.counter))
        #expect(policy.decide(.restore, .failed(.counter)).verdict?.description == "failed: counter")
        #expect(policy.decide(.identify, .absent).verdict == .unattested)
        #expect(policy.decide(.newInstallation, .unsupported).verdict == .unsupported)
    }

    @Test("enforce_new gates only new installations; restores and identifies are recorded")
    func enforceNew() {
        let policy = Self.policy(.enforceNew)
        #expect(policy.decide(.newInstallation, .absent).refusal == .attestationRequired)
        #expect(policy.decide(.newInstallation, .unsupported).refusal == .attestationRequired)
        #expect(policy.decide(.newInstallation, .failed(.nonce)).refusal == .attestationInvalid(.nonce))
        #expect(policy.decide(.newInstallation, .challengeInvalid).refusal == .challengeInvalid)
        #expect(policy.decide(.newInstallation, .attested).refusal == nil)
        for gate in [Policy.Gate.restore, .identify] {
            for outcome in Self.outcomes { #expect(policy.decide(gate, outcome).refusal == nil) }
        }
        #expect(policy.decide(.restore, .failed(.counter)).verdict == .failed(.counter))
    }

    @Test("enforce gates every start and identify: a script without evidence gets nothing")
    func enforce() {
        let policy = Self.policy(.enforce)
        for gate in Self.gates {
            #expect(policy.decide(gate, .absent).refusal == .attestationRequired)
            #expect(policy.decide(gate, .unsupported).refusal == .attestationRequired)
            #expect(policy.decide(gate, .failed(.counter)).refusal == .attestationInvalid(.counter))
            #expect(policy.decide(gate, .challengeInvalid).refusal == .challengeInvalid)
            #expect(policy.decide(gate, .attested).refusal == nil)
            #expect(policy.decide(gate, .asserted).refusal == nil)
        }
    }

    @Test("allow_unsupported lets devices that cannot attest through, recorded as unsupported, in every mode")
    func allowUnsupported() {
        for mode in AppAttestSettings.Mode.allCases where mode != .off {
            let policy = Self.policy(mode, allowUnsupported: true)
            for gate in Self.gates {
                let decision = policy.decide(gate, .unsupported)
                #expect(decision.refusal == nil)
                #expect(decision.verdict == .unsupported)
                #expect(!decision.enforceWouldRefuse)
                // Only `unsupported` is let through: no evidence at all is still refused where required.
                #expect((policy.decide(gate, .absent).refusal != nil) == Policy.requires(mode, at: gate))
            }
        }
    }
}
