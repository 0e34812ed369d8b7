/// One write of a change to a project's keys, as data: ``ProjectKeyProcedure`` lists them in order
/// and each backend only translates each to its SQL (sealing the secret it writes).
enum ProjectKeyStep: Sendable {
    /// Writes a new identity secret.
    case insertIdentitySecret(IdentitySecretRecord)
    /// Deletes the identity secret `kid`.
    case deleteIdentitySecret(kid: String)
    /// Retires the project's current session key at `now`.
    case retireSessionKeys(now: Int64)
    /// Deletes the session keys retired before `before`: no session JWT they signed is alive any more.
    case deleteRetiredSessionKeys(before: Int64)
    /// Writes a new session key, current until the next rotation.
    case insertSessionKey(SessionKeyRecord)
    /// An event that depends on nothing the database answers.
    case event(EventDraft)
}

/// The changes to a project's keys (identity secrets added and removed, the session key rotated),
/// decided once for both backends from the project's keys as the transaction found them (on
/// PostgreSQL, under the project's lock), as steps.
enum ProjectKeyProcedure {
    /// How long a retired session key still verifies the JWTs it signed, in seconds.
    static let retiredSessionKeyGraceSeconds: Int64 = 86_400

    /// Adds `secret` to a project that has `count` identity secrets.
    ///
    /// - Throws: `identity_secret_limit_reached` when the project already has `limit`.
    static func addIdentitySecret(_ secret: IdentitySecretRecord, count: Int, limit: Int) throws -> [ProjectKeyStep] {
        guard count < limit else { throw CoreError.identitySecretLimitReached(limit) }
        return [.insertIdentitySecret(secret), .event(.identitySecretCreated(kid: secret.kid))]
    }

    /// Removes the identity secret `kid` from a project whose secrets are `kids`; nil when it has no
    /// such secret.
    ///
    /// - Throws: `last_identity_secret` when it is the project's only one.
    static func deleteIdentitySecret(kid: String, kids: [String]) throws -> [ProjectKeyStep]? {
        guard kids.contains(kid) else { return nil }
        guard kids.count > 1 else { throw CoreError.lastIdentitySecret }
        return [.deleteIdentitySecret(kid: kid), .event(.identitySecretDeleted(kid: kid))]
    }

    /// Rotates the session key: the current one retires now, those retired longer than the grace
    /// period go, and `newKey` signs from now on.
    static func rotateSessionKey(_ newKey: SessionKeyRecord, now: Int64) -> [ProjectKeyStep] {
        [
            .retireSessionKeys(now: now), .deleteRetiredSessionKeys(before: now - retiredSessionKeyGraceSeconds),
            .insertSessionKey(newKey), .event(.signingKeyRotated(kid: newKey.kid)),
        ]
    }
}
