import Hummingbird

extension SessionsController {
    /// Puts the request's client (address and user agent) on a new session, written with it, and
    /// tells ``SessionClientRecorder`` so that the session's heartbeats from the same client write
    /// nothing.
    func recordClient(_ session: inout SessionRecord, _ request: Request, _ context: TesseraRequestContext) {
        let client = SessionClient(
            address: addresses.key(request, context: context), userAgent: request.headers[.userAgent])
        session.client = client
        core.sessionClients.created(sessionID: session.id, client: client)
    }
}
