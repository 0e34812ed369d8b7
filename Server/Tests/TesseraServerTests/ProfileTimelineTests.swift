import Testing

@testable import TesseraServer

/// The profile page's timeline tells each event in words, naming operators by email.
@Suite("Profile timeline")
struct ProfileTimelineTests {
    static let installation = "9274ab1c-5d3e-4f0a-9b7c-2e1d0c9f8a76"

    static func event(
        _ type: String, _ data: String, actor: EventActor = .init(kind: .sdk, id: nil), reason: String? = nil
    )
        -> EventRecord
    {
        EventRecord(
            id: "evt_x", projectID: "prj_x", sequence: 1, type: type, createdAt: 1_700_000_000, actor: actor,
            clientAddress: nil, profileID: "usr_0190000000000Abcdefgh12345678", data: data, reason: reason)
    }

    @Test(
        "Each kind of event in words",
        arguments: [
            (
                "session.created",
                #"{"session_id":"ses_019000000000AAAABBBBCCCCDDDD","profile_id":"usr_a","kind":"verified","installation_id":"\#(installation)"}"#,
                nil, "Signed in on installation 9274ab1c… (verified)"
            ),
            (
                "session.created",
                #"{"session_id":"ses_x","profile_id":"usr_a","kind":"anonymous","installation_id":"\#(installation)"}"#,
                nil, "Started an anonymous session on installation 9274ab1c…"
            ),
            (
                "session.created", #"{"session_id":"ses_x","profile_id":"usr_a","kind":"unverified"}"#, nil,
                "Signed in (unverified: the app's word, not a signed identity)"
            ),
            (
                "session.ended",
                #"{"session_id":"ses_019000000000AAAABBBBCCCCDDDD","profile_id":"usr_a","reason":"signed_out"}"#, nil,
                "Session ses_…CCCCDDDD ended: signed out"
            ),
            (
                "session.ended", #"{"session_id":"ses_x","profile_id":"usr_a","reason":"admin"}"#, "opr_1",
                "Session ses_x ended: ended by ops@example.com"
            ),
            (
                "profile.promoted", #"{"profile_id":"usr_a","external_id":"user-42"}"#, nil,
                "Signed in as user-42: this anonymous profile became theirs"
            ),
            (
                "profile.merged",
                #"{"profile_id":"usr_a","from_profile_id":"usr_019000000000AAAABBBBCCCCDDDD","external_id":"user-42","alias_ids":[]}"#,
                nil, "Profile usr_…CCCCDDDD was merged into this one at sign-in as user-42"
            ),
            ("profile.blocked", #"{"profile_id":"usr_a"}"#, "opr_1", "Blocked by ops@example.com: chargeback"),
            ("profile.unblocked", #"{"profile_id":"usr_a"}"#, "opr_gone", "Unblocked by an operator"),
            ("profile.updated", #"{"profile_id":"usr_a","changed":["name","email"]}"#, nil, "Updated: name, email"),
            (
                "device.registered",
                #"{"device_id":"dev_019000000000AAAABBBBCCCCDDDD","profile_id":"usr_a","session_id":"ses_x"}"#, nil,
                "Push device dev_…CCCCDDDD registered"
            ),
            ("profile.created", #"{"profile_id":"usr_a","kind":"anonymous"}"#, nil, "Created as an anonymous profile"),
            ("profile.new_key", "not json", nil, "A new device key"),
        ] as [(String, String, String?, String)])
    func sentences(type: String, data: String, operatorID: String?, expected: String) {
        let actor = operatorID.map { EventActor(kind: .operator, id: $0) } ?? EventActor(kind: .sdk, id: nil)
        let reason = type == "profile.blocked" ? "chargeback" : nil
        let text = ProfileTimeline.sentence(
            Self.event(type, data, actor: actor, reason: reason), operatorEmails: ["opr_1": "ops@example.com"])
        #expect(text == expected)
    }

    @Test("Actors: the app's backend, the app, Tessera")
    func actors() {
        #expect(
            ProfileTimeline.actor(.init(kind: .secretKey, id: nil), operatorEmails: [:])
                == "the app's backend (secret key)")
        #expect(ProfileTimeline.actor(.init(kind: .system, id: nil), operatorEmails: [:]) == "Tessera")
        #expect(ProfileTimeline.actor(.init(kind: .sdk, id: nil), operatorEmails: [:]) == "the app")
    }
}
