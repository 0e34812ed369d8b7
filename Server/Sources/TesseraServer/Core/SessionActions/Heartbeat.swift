import TesseraTokens

/// The heartbeat (`POST /v1/sessions/authenticate`): a live session checks itself, gets a fresh
/// session JWT and, with a requested duration, extends itself.
///
/// A function of plain inputs — the authenticated caller, the parsed body, the request's proof and
/// `now` — returning what the answer states; the HTTP layer only decodes the body and writes the
/// envelope. The heartbeat without a body is the server's hottest path:
/// ``check(_:caller:clientAddress:userAgent:now:)`` is synchronous (no task frame, no suspension)
/// and writes nothing once the profile and the client were seen today.
///
/// Only the session token extends: a session JWT travels to the app's backend and lives in logs and
/// caches of other systems, so it may only check and refresh itself (an expired one within its
/// session's life). Otherwise a leaked JWT, even long expired, could keep its session alive to the
/// project's maximum.
///
/// The heartbeat with a body is ``SessionActions/extend(caller:requestedMinutes:body:proof:now:)``.
/// A heartbeat and an extension share method, URL and credential; only the body differs, which a
/// DPoP proof does not cover by itself. So an extension of a bound session needs a proof that names
/// its body (`tessera_body`, base64url SHA-256 of the body's bytes) and spends the proof's `jti`:
/// a captured heartbeat proof cannot extend, and the heartbeat stays free of writes (its proof may
/// repeat within its window, as a read's does).
enum HeartbeatAction {
    /// The heartbeat without a body: the caller's session as the authenticator read it (what the
    /// answer states; no extension was requested, so the answer has no `extension_capped`), its
    /// profile marked active for the day and its client noted (a set lookup and a dictionary lookup
    /// once both were seen: nothing is queued for writing unless something is new).
    static func check(
        _ core: TesseraCore, caller: Caller, clientAddress: String, userAgent: String?, now: Int64
    ) -> SessionContext {
        core.activeUsers.saw(caller.context, now: now)
        core.sessionClients.saw(sessionID: caller.context.session.id, address: clientAddress, userAgent: userAgent)
        return caller.context
    }
}
