extension SessionActions {
    /// Puts the request's client (address and user agent) on a new session, written with it, and
    /// tells ``SessionClientRecorder`` so that the session's heartbeats from the same client write
    /// nothing.
    func recordClient(_ session: inout SessionRecord, clientAddress: String, userAgent: String?) {
        let client = SessionClient(address: clientAddress, userAgent: userAgent)
        session.client = client
        core.sessionClients.created(sessionID: session.id, client: client)
    }
}
