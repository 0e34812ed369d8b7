import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// Identifiers are compared and measured as bytes and Unicode scalars, never as Swift `String`s:
/// `==` is canonical equivalence, and `count` counts grapheme clusters.
@Suite("Identifiers as bytes")
struct IdentifierBytesTests {
    /// `é` precomposed (NFC) and decomposed (NFD): canonically equivalent, different bytes.
    static let nfc = "jos\u{E9}"
    static let nfd = "jose\u{301}"

    @Test("NFC and NFD spellings of one text are two users, on every path")
    func canonicalEquivalentsAreTwoUsers() async throws {
        #expect(Self.nfc == Self.nfd)  // what Swift's String says
        try await TestEnvironment.withApp { environment, client in
            let first = try await client.identify(sub: Self.nfc)
            #expect(first["profile"]["external_id"] as? String == Self.nfc)
            // The second user over the first's session is another user (before: `unchanged`, and a new
            // session on the first user's profile).
            let over = try await client.identify(sub: Self.nfd, bearer: first.sessionToken)
            #expect(over.status == .conflict)
            #expect(over.errorCode == "external_user_id_changed")
            let second = try await client.identify(sub: Self.nfd)
            #expect(second.status == .ok)
            #expect(second.profileID != first.profileID)
            let stored = try #require(second["profile"]["external_id"] as? String)
            #expect(Array(stored.utf8) == Array(Self.nfd.utf8))
            // The admin lookup finds each by its own bytes.
            for (text, profileID) in [(Self.nfc, first.profileID), (Self.nfd, second.profileID)] {
                let query = text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!
                let found = try await client.admin(.get, "/v1/admin/profiles?external_id=\(query)")
                let ids = (found.json["profiles"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
                #expect(ids == [profileID].compactMap { $0 })
            }
        }
    }

    @Test("The plan compares external IDs byte for byte")
    func planBytes() throws {
        let caller = ProfileRecord(
            id: "usr_1", projectID: "prj_1", kind: .identified, externalID: Self.nfc, verified: true, createdAt: 0,
            updatedAt: 0)
        #expect(throws: CoreError.self) {
            try IdentifyPlan.decide(caller: caller, existing: nil, externalID: Self.nfd, verified: true)
        }
        #expect(
            try IdentifyPlan.decide(caller: caller, existing: nil, externalID: Self.nfc, verified: true)
                == .unchanged(caller))
    }

    @Test(
        "A user ID is at most 255 Unicode scalars, however few characters they make",
        arguments: [
            "a" + String(repeating: "\u{301}", count: 300),  // one Character, 301 scalars
            "b" + String(repeating: "\u{301}", count: 2_500),  // one Character, 5 KB
            String(repeating: "x", count: 256),
        ])
    func scalarLength(userID: String) async throws {
        #expect(userID.count <= 256)
        try await TestEnvironment.withApp { environment, client in
            _ = try await client.allowUnverifiedIdentify()
            let asserted = try await client.identify(userID: userID)
            #expect(asserted.status == .badRequest)
            #expect(asserted.errorCode == "invalid_request")
            // As a token's sub: invalid_claims, or invalid_identity_token when the payload passes its 4 KiB cap.
            let signed = try await client.identify(sub: userID)
            #expect(signed.status == (userID.utf8.count > 4000 ? .unauthorized : .badRequest))
            #expect(signed.errorCode == (userID.utf8.count > 4000 ? "invalid_identity_token" : "invalid_claims"))
            let query = userID.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!
            let lookup = try await client.admin(.get, "/v1/admin/profiles?external_id=\(query)")
            #expect(lookup.status == .badRequest)
        }
    }

    @Test("255 scalars of four bytes each are accepted, and the session JWT they make verifies")
    func longestUserID() async throws {
        let userID = String(repeating: "\u{1F600}", count: 255)
        #expect(userID.utf8.count == 1020)
        try await TestEnvironment.withApp { environment, client in
            _ = try await client.allowUnverifiedIdentify()
            let asserted = try await client.identify(userID: userID)
            #expect(asserted.status == .ok)
            let me = try await client.send(.get, "/v1/me", bearer: asserted.sessionJWT)
            #expect(me.status == .ok)
            #expect(me["profile"]["external_id"] as? String == userID)
        }
    }
}
