import HTTPTypes

extension ConsoleController {
    /// How the console shows an operator-account failure: its status, its code and its sentence.
    /// Sign-in failures all read the same (``ConsoleError/invalidLogin``), so a page never tells
    /// which of email, password or code was wrong.
    static func failure(_ error: ConsoleError) -> ConsoleFailure {
        let status: HTTPResponse.Status =
            switch error.code {
            case .invalidLogin, .totpRequired: .unauthorized
            case .invalidTOTP, .weakPassword, .invalidEmail: .badRequest
            case .rateLimited: .tooManyRequests
            case .enrollmentExpired: .gone
            case .operatorExists: .conflict
            case .operatorNotFound: .notFound
            case .unavailable: .serviceUnavailable
            }
        var headers = HTTPFields()
        if let seconds = error.retryAfterSeconds { headers[.retryAfter] = String(seconds) }
        return ConsoleFailure(status: status, code: error.code.rawValue, message: error.message, headers: headers)
    }
}
