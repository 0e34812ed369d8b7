/// A JSON value as read by ``StrictJSONReader``.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object whose member names are unique, in document order.
struct JSONObject: Sendable, Equatable {
    struct Member: Sendable, Equatable {
        var name: String
        /// Whether `name` is pure ASCII. Only such names can equal the ASCII names the codec looks for,
        /// and for them Swift's `==` is a byte comparison (no Unicode canonical equivalence applies).
        var isASCII: Bool
        var value: JSONValue

        static func == (lhs: Member, rhs: Member) -> Bool {
            lhs.name.utf8.elementsEqual(rhs.name.utf8) && lhs.value == rhs.value
        }
    }

    var members: [Member]

    init(members: [Member] = []) { self.members = members }

    init(members: [(name: String, value: JSONValue)]) {
        self.members = members.map {
            Member(name: $0.name, isASCII: $0.name.utf8.allSatisfy { $0 < 0x80 }, value: $0.value)
        }
    }

    /// The member named `name`, an ASCII string, compared byte for byte.
    subscript(name: String) -> JSONValue? {
        for member in members where member.isASCII && member.name == name {
            return member.value
        }
        return nil
    }
}
