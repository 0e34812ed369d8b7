/// A master key that cannot be used, or a database whose secrets it does not open.
public struct MasterKeyError: Error, Sendable, CustomStringConvertible {
    /// `master_key_mismatch` when the database's secrets are sealed under another key; else a
    /// configuration failure.
    public let code: String
    /// What went wrong and what to do, without any key material.
    public let message: String

    public var description: String { "\(code): \(message)" }

    static func invalidKey(_ message: String) -> MasterKeyError {
        MasterKeyError(code: "invalid_master_key", message: message)
    }

    static func unreadableFile(_ message: String) -> MasterKeyError {
        MasterKeyError(code: "invalid_master_key", message: message)
    }

    static func missing(_ message: String) -> MasterKeyError {
        MasterKeyError(code: "master_key_missing", message: message)
    }

    static func unsealed(_ message: String) -> MasterKeyError {
        MasterKeyError(code: "unsealed_value", message: message)
    }

    static func mismatch(_ message: String) -> MasterKeyError {
        MasterKeyError(code: "master_key_mismatch", message: message)
    }
}
