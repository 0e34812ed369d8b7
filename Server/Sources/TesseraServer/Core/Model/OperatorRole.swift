/// What an operator of the console may do; each role can do everything the roles before it can.
///
/// viewer reads (emails masked), support also revokes sessions and removes devices, admin also
/// changes settings, keys and webhooks, owner also manages operators and projects.
public enum OperatorRole: String, Sendable, CaseIterable, Comparable {
    case viewer
    case support
    case admin
    case owner

    /// The role's rank: its position in ``allCases``.
    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }

    public static func < (lhs: OperatorRole, rhs: OperatorRole) -> Bool { lhs.rank < rhs.rank }
}
