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
    var members: [(name: String, value: JSONValue)]

    init(members: [(name: String, value: JSONValue)] = []) { self.members = members }

    /// The member named `name`, compared byte for byte (no Unicode normalisation).
    subscript(name: String) -> JSONValue? {
        for member in members where member.name.utf8.elementsEqual(name.utf8) {
            return member.value
        }
        return nil
    }

    func contains(_ name: String) -> Bool { self[name] != nil }

    static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy {
                $0.name.utf8.elementsEqual($1.name.utf8) && $0.value == $1.value
            }
    }
}
