/// The input rules of the webhook endpoints.
enum WebhookRules {
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static func refuseUnknownMembers(_ decoder: any Decoder, known: [String]) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = all.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw CoreError.invalidRequest("\(unknown.stringValue) is not a webhook member.")
        }
    }

    /// The types, each a known event type, without repeats (empty: every type).
    static func types(_ types: [String]) throws -> [String] {
        guard types.count <= EventTypes.all.count * 2 else {
            throw CoreError.invalidRequest("types has too many entries.")
        }
        var seen: [String] = []
        for type in types {
            guard EventTypes.known.contains(type) else {
                throw CoreError.invalidRequest("types: \(type.prefix(64)) is not an event type.")
            }
            if !seen.contains(type) { seen.append(type) }
        }
        return seen
    }

    static func description(_ description: String?) throws -> String? {
        guard let description else { return nil }
        guard description.unicodeScalars.count <= 500,
            !description.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw CoreError.invalidRequest("description must be at most 500 characters without control characters.")
        }
        return description
    }

    static func url(_ url: String, allowInsecure: Bool) throws -> String {
        do {
            _ = try WebhookAddressRules.checkURL(url, allowInsecure: allowInsecure)
        } catch {
            throw CoreError(.webhookURLNotAllowed, error.message)
        }
        return url
    }
}
