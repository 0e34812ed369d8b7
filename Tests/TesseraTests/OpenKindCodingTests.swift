import Foundation
import Testing

@testable import Tessera

@Suite("Open kinds are coded as their raw strings")
struct OpenKindCodingTests {
    @Test("A kind or outcome, known or added by a newer server, is a plain JSON string both ways")
    func rawStrings() throws {
        let json = Data(#"["anonymous","verified","from_the_future"]"#.utf8)
        let capabilities = try JSONDecoder().decode([Capabilities.Kind].self, from: json)
        #expect(capabilities == [.anonymous, .verified, Capabilities.Kind(rawValue: "from_the_future")])
        #expect(try JSONEncoder().encode(capabilities) == json)
        let profiles = try JSONDecoder().decode([Profile.Kind].self, from: json)
        #expect(profiles.map(\.rawValue) == ["anonymous", "verified", "from_the_future"])
        #expect(try JSONEncoder().encode(profiles) == json)
        let outcomes = try JSONDecoder().decode([Merge.Outcome].self, from: Data(#"["promoted","later"]"#.utf8))
        #expect(outcomes == [.promoted, Merge.Outcome(rawValue: "later")])
        #expect(try JSONEncoder().encode(outcomes) == Data(#"["promoted","later"]"#.utf8))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Capabilities.Kind.self, from: Data(#"{"rawValue":"anonymous"}"#.utf8))
        }
    }
}
