/// One log line from the SDK, handed to ``TesseraConfiguration/logHandler``. Never contains a credential.
public struct TesseraLogMessage: Sendable, Hashable, CustomStringConvertible {
    /// Severity.
    public enum Level: Int, Sendable, Hashable, Comparable {
        case debug, info, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Severity.
    public var level: Level
    /// The text.
    public var message: String

    /// Creates a log message.
    /// - Parameters:
    ///   - level: Severity.
    ///   - message: The text; never a credential.
    public init(level: Level, message: String) {
        self.level = level
        self.message = message
    }

    public var description: String { "[tessera] \(level): \(message)" }
}
