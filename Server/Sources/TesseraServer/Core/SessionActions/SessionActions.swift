import Foundation

/// What a device does with its sessions, whichever way the request came: an anonymous start or
/// restore, identify, an extension, a sign-out, the session list and its removals, push devices.
///
/// Each method is a function of plain inputs (the project's runtime, the calling session if any,
/// the body as read, the client's address and the request's one clock reading `now`) that answers
/// a result or throws a ``CoreError`` (and then has changed nothing). The rate limits and the
/// identity secrets' `last_used_at` are applied here and nowhere else; the HTTP controllers only
/// decode, call and encode, and tests call these methods without a router.
struct SessionActions: Sendable {
    let core: TesseraCore

    /// The origin of a device's events: the calling session (if any) and the client address.
    static func origin(caller: Caller?, clientAddress: String) -> EventOrigin {
        EventOrigin(actor: .sdk(sessionID: caller?.context.session.id), clientAddress: clientAddress)
    }

    /// The request's clock reading in whole Unix seconds.
    static func seconds(_ now: Date) -> Int64 { CredentialResolver.seconds(now) }

    /// Says why the caller's session is no longer alive (`session_revoked`, `session_expired`,
    /// `session_not_found`), after a store found it not alive in the transaction that was to act.
    func callerEnded(_ caller: Caller, now: Int64) async throws -> Never {
        _ = try await core.credentials.liveSession(id: caller.context.session.id, now: now)
        throw CoreError.sessionNotFound
    }
}
