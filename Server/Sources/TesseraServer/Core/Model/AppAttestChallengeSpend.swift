/// What spending an App Attest challenge found (``TesseraStore/consumeAppAttestChallenge(projectID:challengeHash:now:)``).
public enum AppAttestChallengeSpend: Sendable, Hashable {
    /// The challenge was stored and still valid: it is spent now.
    case spent
    /// The challenge was stored but expired: it is deleted, and the request must ask for a new one.
    case expired
    /// No such challenge: never issued, issued to another project, or already spent.
    case unknown
}
