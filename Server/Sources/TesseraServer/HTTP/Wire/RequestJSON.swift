import Foundation

/// A request body: what the server decodes, and which of its members it reads.
protocol RequestBody: Decodable {
    /// The top-level members the server reads: the strict reader judges every string in them (nil:
    /// every member, for bodies that refuse unknown members). Other members are ignored.
    static var readMembers: Set<String>? { get }
}

/// Decodes request bodies; every failure is a `400 invalid_request` that says what was wrong.
enum RequestJSON {
    static func decode<T: RequestBody>(_ type: T.Type, from bytes: [UInt8]) throws(CoreError) -> T {
        guard bytes.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) == UInt8(ascii: "{")
        else {
            throw CoreError.invalidRequest("The request body must be a JSON object.")
        }
        do {
            try StrictRequestJSON.validate(bytes, readMembers: T.readMembers)
        } catch {
            throw CoreError.invalidRequest(error.message)
        }
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as CoreError {
            throw error
        } catch let error as DecodingError {
            throw CoreError.invalidRequest(message(for: error))
        } catch {
            throw CoreError.invalidRequest("The request body is not valid JSON.")
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    private static func message(for error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)) must be \(describe(type))."
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)) must be \(describe(type)), not null."
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            return "\(parent.isEmpty ? "" : parent + ".")\(key.stringValue) is required."
        case .dataCorrupted(let context):
            let location = path(context.codingPath)
            return location.isEmpty ? "The request body is not valid JSON." : "\(location) is not valid."
        @unknown default:
            return "The request body is not valid."
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int64.Type: return "an integer"
        case is Bool.Type: return "a boolean"
        default: return "of the documented type"
        }
    }
}

/// A JSON value that is accepted and ignored (used to list the members of an object).
struct AnyJSONValue: Decodable {
    init(from decoder: any Decoder) throws {}
}
