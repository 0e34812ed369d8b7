import Testing

@testable import TesseraServer

/// An anonymous start's decisions and writes, without a store: the backends only translate the steps.
@Suite("Anonymous start procedure")
struct AnonymousStartProcedureTests {
    static let now: Int64 = 1_795_000_000
    static let secret: [UInt8] = Array(repeating: 7, count: 32)

    static func request(jkt: String? = nil, limit: Int64? = nil) -> AnonymousStart {
        var request = AnonymousStart(
            projectID: "prj_1", installationID: "inst-1", installationSecretHash: secret, newProfileID: "usr_new",
            newSession: SessionRecord(
                id: "ses_new", projectID: "prj_1", profileID: "", installationID: nil, kind: .anonymous,
                createdAt: now, lastAuthenticatedAt: now, expiresAt: now + 3600, jkt: jkt),
            sessionTokenHash: [1, 2, 3])
        request.maxSessionsPerProfile = limit
        return request
    }

    static func profile(blockedAt: Int64? = nil) -> ProfileRecord {
        ProfileRecord(
            id: "usr_old", projectID: "prj_1", kind: .anonymous, externalID: nil, verified: false, createdAt: 1,
            updatedAt: 1, blockedAt: blockedAt)
    }

    /// The steps as short names, the events by type.
    static func names(_ steps: [AnonymousStartStep]) -> [String] {
        steps.map {
            switch $0 {
            case .insertProfile(let profile): "insertProfile \(profile.id)"
            case .insertInstallation(let profileID): "insertInstallation \(profileID)"
            case .attachInstallation(let profileID): "attachInstallation \(profileID)"
            case .endOtherKeySessions(let profileID, let jkt): "endOtherKeySessions \(profileID) \(jkt)"
            case .evictSessions(let profileID, let limit): "evictSessions \(profileID) \(limit)"
            case .insertSession(let session, _): "insertSession \(session.id) \(session.profileID)"
            case .event(let draft): "event \(draft.type.rawValue)"
            }
        }
    }

    @Test("A new installation: a new profile, the installation, the session, in that order")
    func newInstallation() throws {
        let procedure = try AnonymousStartProcedure.make(
            Self.request(jkt: "k1", limit: 2), storedSecretHash: nil, current: nil)
        #expect(
            Self.names(procedure.steps) == [
                "insertProfile usr_new", "event profile.created", "insertInstallation usr_new",
                "insertSession ses_new usr_new", "event session.created",
            ])
        #expect(procedure.createdInstallation)
        #expect(procedure.context.profile.id == "usr_new")
        #expect(procedure.context.session.installationID == "inst-1")
    }

    @Test("A restore with a new device key ends the other key's sessions and evicts before the new session")
    func restore() throws {
        let procedure = try AnonymousStartProcedure.make(
            Self.request(jkt: "k2", limit: 3), storedSecretHash: Self.secret, current: Self.profile())
        #expect(
            Self.names(procedure.steps) == [
                "endOtherKeySessions usr_old k2", "evictSessions usr_old 3", "insertSession ses_new usr_old",
                "event session.created",
            ])
        #expect(!procedure.createdInstallation)
        #expect(procedure.context.profile == Self.profile())
    }

    @Test("An installation whose profile is gone gets a new profile attached")
    func orphanedInstallation() throws {
        let procedure = try AnonymousStartProcedure.make(Self.request(), storedSecretHash: Self.secret, current: nil)
        #expect(
            Self.names(procedure.steps).prefix(3) == [
                "insertProfile usr_new", "event profile.created", "attachInstallation usr_new",
            ])
        #expect(!procedure.createdInstallation)
    }

    @Test("Refusals: another secret, a blocked profile, a restore the gate passed whose installation is gone")
    func refusals() throws {
        #expect(throws: CoreError.installationConflict) {
            try AnonymousStartProcedure.make(Self.request(), storedSecretHash: [0], current: Self.profile())
        }
        #expect(throws: CoreError.profileBlocked) {
            try AnonymousStartProcedure.make(
                Self.request(), storedSecretHash: Self.secret, current: Self.profile(blockedAt: 5))
        }
        var gated = Self.request()
        gated.refusesNewInstallation = true
        #expect(throws: CoreError.attestationRequired) {
            try AnonymousStartProcedure.make(gated, storedSecretHash: nil, current: nil)
        }
        #expect(
            try AnonymousStartProcedure.make(gated, storedSecretHash: Self.secret, current: Self.profile()).steps.count
                == 2)
    }
}
