import HTTPTypes
import Hummingbird

/// One route of the API: its method and path, the credential it accepts, and its handler.
///
/// ``EndpointTable`` lists them all; ``TesseraRouter`` registers them, each behind an
/// ``Authenticator`` for its credential, and derives the 404/405 table from the same list.
struct Endpoint: Sendable {
    typealias Handler = @Sendable (Request, TesseraRequestContext) async throws -> Response

    let method: HTTPRequest.Method
    /// The path template (`/v1/sessions/:session_id`).
    let path: String
    let accepts: CredentialRequirement
    /// Whether the endpoint changes something, so that a DPoP proof's `jti` is single-use on it
    /// (RFC 9449 §11.1). `POST /v1/sessions/authenticate` is false: its handler spends the proof of
    /// an extension, which must also name its body, and leaves the heartbeat free of writes
    /// (``SessionsController/authenticate(_:context:)``).
    let spendsProof: Bool
    let handler: Handler

    init(
        _ method: HTTPRequest.Method, _ path: String, accepts: CredentialRequirement, spendsProof: Bool = false,
        _ handler: @escaping Handler
    ) {
        self.method = method
        self.path = path
        self.accepts = accepts
        self.spendsProof = spendsProof
        self.handler = handler
    }
}
