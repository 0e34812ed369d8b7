import HTTPTypes
import Testing

@testable import TesseraServer

/// The one mapping from core errors to the wire (`APIError.init(_:)`).
@Suite("Error mapping: core errors to statuses and headers")
struct ErrorMappingTests {
    @Test("Every wire code answers its contract status")
    func statuses() {
        let expected: [(ErrorCode, HTTPResponse.Status)] = [
            (.invalidRequest, .badRequest), (.invalidSessionDuration, .badRequest),
            (.webhookURLNotAllowed, .badRequest),
            (.invalidAPIKey, .unauthorized), (.invalidCredentials, .unauthorized),
            (.identityTokenReplayed, .unauthorized), (.sessionNotFound, .unauthorized),
            (.sessionExpired, .unauthorized), (.sessionRevoked, .unauthorized),
            (.unverifiedIdentifyDisabled, .forbidden), (.sessionTokenRequired, .forbidden),
            (.profileBlocked, .forbidden), (.notFound, .notFound), (.methodNotAllowed, .methodNotAllowed),
            (.externalUserIDChanged, .conflict), (.installationConflict, .conflict),
            (.identitySecretLimitReached, .conflict), (.lastIdentitySecret, .conflict), (.slugTaken, .conflict),
            (.payloadTooLarge, .contentTooLarge), (.rateLimited, .tooManyRequests),
            (.serviceUnavailable, .serviceUnavailable), (.internalError, .internalServerError),
            // Identity-token codes: 400 for the content of the claims, else 401, with the standard reason.
            (ErrorCode(rawValue: "invalid_claims"), .badRequest), (ErrorCode(rawValue: "invalid_email"), .badRequest),
            (ErrorCode(rawValue: "invalid_signature"), .unauthorized),
            (ErrorCode(rawValue: "identity_token_expired"), .unauthorized),
        ]
        for (code, status) in expected {
            let error = APIError(CoreError(code, "m"))
            #expect(error.status == status, "\(code)")
            #expect(error.status.reasonPhrase == status.reasonPhrase, "\(code)")
            #expect(error.code == code)
            #expect(error.message == "m")
            #expect(error.headers[.retryAfter] == nil)
        }
    }

    @Test("Retry-After comes from the core error: a rate limit's window, one second for the database")
    func retryAfter() {
        let limited = APIError(CoreError.rateLimited(retryAfter: 20))
        #expect(limited.status == .tooManyRequests)
        #expect(limited.headers[.retryAfter] == "20")
        let unavailable = APIError(CoreError.unavailable)
        #expect(unavailable.status == .serviceUnavailable)
        #expect(unavailable.code == .serviceUnavailable)
        #expect(unavailable.headers[.retryAfter] == "1")
    }
}
