import Foundation
import Hummingbird

extension AdminController {
    /// The installations a profile holds (at most 100, oldest first), each with its App Attest record.
    func installations(of profile: ProfileRecord) async throws -> [(id: String, record: AppAttestRecord?)] {
        let ids = try await core.store.installationIDs(projectID: profile.projectID, profileID: profile.id)
        let records = try await core.store.appAttestRecords(projectID: profile.projectID, installationIDs: ids)
        return ids.map { id in (id, records.first { $0.installationID == id }) }
    }

    /// `{profile, installations}`: a profile as admin answers show it, with its installations' App
    /// Attest verdicts.
    func profileResponse(_ profile: ProfileRecord) async throws -> Response {
        let installations = try await installations(of: profile)
        return .json { writer in
            writer.objectStart()
            writer.key("profile")
            writer.profile(profile, admin: true)
            writer.array("installations", installations) { writer, installation in
                writer.installation(installation.id, record: installation.record)
            }
            writer.objectEnd()
        }
    }
}

extension JSONWriter {
    /// `{installation_id, app_attest}`: `app_attest` is null until a start or identify of the
    /// installation was checked (a project mode other than `off`).
    mutating func installation(_ id: String, record: AppAttestRecord?) {
        objectStart()
        field("installation_id", id)
        key("app_attest")
        if let record {
            objectStart()
            field("verdict", record.verdict)
            field("enforce_would_refuse", record.enforceWouldRefuse)
            time("updated_at", record.updatedAt)
            key("key")
            if let key = record.key {
                objectStart()
                field("key_id", Data(key.keyID).base64EncodedString())
                field("environment", key.environment)
                field("app_id", key.appID)
                field("counter", key.counter)
                time("attested_at", key.attestedAt)
                objectEnd()
            } else {
                null()
            }
            objectEnd()
        } else {
            null()
        }
        objectEnd()
    }
}
