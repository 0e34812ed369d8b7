/// What happened to the anonymous profile when an anonymous session was identified.
public struct Merge: Sendable, Hashable, Codable {
    /// The merge outcome; open to outcomes a newer server may add.
    /// Encoded as its raw string (the standard library's coding of a `RawRepresentable` string).
    public struct Outcome: RawRepresentable, Sendable, Hashable, Codable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// No profile had this user ID: the anonymous profile became it.
        public static let promoted = Outcome(rawValue: "promoted")
        /// A profile had it: the anonymous profile was folded into it and kept as an alias.
        public static let merged = Outcome(rawValue: "merged")
        /// The session already belonged to this user.
        public static let unchanged = Outcome(rawValue: "unchanged")
    }

    /// What happened.
    public var outcome: Outcome
    /// The anonymous profile that was carried over.
    public var fromProfileID: String?

    /// Creates a merge value.
    /// - Parameters:
    ///   - outcome: What happened.
    ///   - fromProfileID: The anonymous profile that was carried over.
    public init(outcome: Outcome, fromProfileID: String?) {
        self.outcome = outcome
        self.fromProfileID = fromProfileID
    }

    enum CodingKeys: String, CodingKey {
        case outcome
        case fromProfileID = "from_profile_id"
    }
}
