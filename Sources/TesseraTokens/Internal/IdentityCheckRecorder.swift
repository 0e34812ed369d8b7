import Foundation

/// One check of ``IdentityTokenVerifier``, in the order an inspection lists them.
///
/// The raw value is the check's position in ``IdentityTokenInspection/checks``. The verifier evaluates
/// them in this order too, except that it looks at the signature's length before the `kid`.
enum IdentityCheck: Int, CaseIterable {
    case structure, algorithm, type, keyID, signature, payloadJSON
    case expType, notBeforeType, issuedAtType, audienceType, tokenID, issuerType
    case expiration, notBefore, issuedAt, lifetime
    case subjectType, audience, issuer, subject, name, avatarURL, email

    /// The name an operator sees.
    var name: String {
        switch self {
        case .structure: "structure"
        case .algorithm: "algorithm"
        case .type: "typ"
        case .keyID: "key id"
        case .signature: "signature"
        case .payloadJSON: "payload JSON"
        case .expType: "exp type"
        case .notBeforeType: "nbf type"
        case .issuedAtType: "iat type"
        case .audienceType: "aud type"
        case .tokenID: "jti"
        case .issuerType: "iss type"
        case .expiration: "exp"
        case .notBefore: "nbf"
        case .issuedAt: "iat"
        case .lifetime: "lifetime"
        case .subjectType: "sub type"
        case .audience: "aud"
        case .issuer: "iss"
        case .subject: "sub"
        case .name: "name"
        case .avatarURL: "avatar"
        case .email: "email"
        }
    }
}

/// Receives the outcome of each check as the verifier evaluates it.
///
/// The verifier's code is written once, generic over the recorder: ``FailFastRecorder`` throws the
/// first failure and builds no detail (that is `verify`, same checks, same order, same errors), and
/// ``InspectionRecorder`` writes every verdict down and keeps the first failure, which is therefore
/// exactly what `verify` throws.
protocol IdentityCheckRecorder {
    /// Records the outcome of `check`: `failure` is `nil` when it passed.
    /// - Parameter detail: a short sentence for people; called only by recorders that keep it.
    /// - Returns: whether the check passed.
    /// - Throws: `failure`, if this recorder stops at the first one.
    @discardableResult
    mutating func record(_ check: IdentityCheck, _ failure: TokenError?, _ detail: () -> String) throws(TokenError)
        -> Bool

    /// Whether details are kept; `false` lets the verify path skip every detail and closure.
    static var keepsDetails: Bool { get }
}

extension IdentityCheckRecorder {
    /// Runs `body` as the check `check` and records its verdict.
    /// - Parameter detail: a short sentence about the value, for a check that passed; called only by
    ///   recorders that keep details (a failure's detail is its message).
    /// - Returns: the value, or `nil` when the check failed.
    /// - Throws: the failure, if this recorder stops at the first one.
    @inline(__always)
    mutating func record<Value>(
        _ check: IdentityCheck,
        _ body: () throws(TokenError) -> Value,
        _ detail: (Value) -> String
    ) throws(TokenError) -> Value? {
        // A statically dispatched helper, not a requirement: specialized, it is `try body()` for `verify`.
        guard Self.keepsDetails else { return try body() }
        switch outcome(of: body) {
        case .success(let value):
            try record(check, nil) { detail(value) }
            return value
        case .failure(let error):
            try record(check, error) { error.message }
            return nil
        }
    }
}

/// The recorder of `verify`: throws the first failure and keeps nothing.
struct FailFastRecorder: IdentityCheckRecorder {
    @inline(__always)
    @discardableResult
    mutating func record(_ check: IdentityCheck, _ failure: TokenError?, _ detail: () -> String) throws(TokenError)
        -> Bool
    {
        if let failure { throw failure }
        return true
    }

    static var keepsDetails: Bool { false }
}

/// The recorder of `inspect`: every verdict, and the first failure in the verifier's order.
struct InspectionRecorder: IdentityCheckRecorder {
    /// One entry per ``IdentityCheck``; a check never recorded stays `notChecked`.
    var checks: [IdentityTokenInspection.Check] = IdentityCheck.allCases.map {
        .init(name: $0.name, verdict: .notChecked, detail: "Not checked: an earlier failure made it impossible.")
    }
    /// The first failure recorded, which is the one `verify` throws.
    var error: TokenError?

    mutating func record(_ check: IdentityCheck, _ failure: TokenError?, _ detail: () -> String) -> Bool {
        checks[check.rawValue] = .init(name: check.name, verdict: failure == nil ? .passed : .failed, detail: detail())
        if let failure, error == nil { error = failure }
        return failure == nil
    }

    static var keepsDetails: Bool { true }
}

/// Turns a throwing check into its failure, so an inspection can go on past it.
@inline(__always)
func failure(of body: () throws(TokenError) -> Void) -> TokenError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

/// Turns a throwing check into its value or its failure.
@inline(__always)
func outcome<Value>(of body: () throws(TokenError) -> Value) -> Result<Value, TokenError> {
    do {
        return .success(try body())
    } catch {
        return .failure(error)
    }
}
