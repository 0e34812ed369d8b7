/// What a sign-in found on the operator's row as locked (``TesseraStore/logInOperator(session:passwordHash:totpStep:)``).
public enum OperatorLoginOutcome: Sendable, Equatable {
    /// The sign-in is recorded and its session opened.
    case signedIn
    /// The operator was removed since its password was checked.
    case unknownOperator
    /// The password was reset (or never set) since it was checked.
    case passwordChanged
    /// The TOTP step, or a later one, was used by another sign-in meanwhile.
    case totpStepUsed
}
