import Foundation
import TesseraTokens

extension ProjectProvisioner {
    /// What the Keys page shows of an API key: the whole publishable key (it is public, and tells
    /// which key an app build carries), the last four characters of a secret key.
    public static func hint(kind: APIKeyKind, key: String) -> String {
        kind == .publishable ? key : "sk_…" + key.suffix(4)
    }

    /// Rotates a project's API key on the server's machine (`tessera projects rotate-key`): the
    /// break-glass for a lost or leaked secret key. The old key stays accepted for `graceSeconds`;
    /// the change is audited as an operator's change with the ID `command-line`. Answers the new key, to print once.
    ///
    /// - Parameters:
    ///   - project: the project's ID or slug.
    ///   - kind: the key to rotate.
    ///   - graceSeconds: how long the old key keeps working, 0 to 30 days.
    ///   - store: the deployment's store.
    ///   - now: the time of the rotation.
    public static func rotateKey(
        project: String, kind: APIKeyKind, graceSeconds: Int64, store: any TesseraStore, now: Date = Date()
    ) async throws -> (project: ProjectRecord, key: String) {
        guard (0...maximumAPIKeyGraceSeconds).contains(graceSeconds) else {
            throw ConfigurationError("--grace-seconds is between 0 and \(maximumAPIKeyGraceSeconds)")
        }
        guard let record = try await store.allProjects().first(where: { $0.id == project || $0.slug == project })
        else { throw ConfigurationError("there is no project \(project) (tessera projects list)") }
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let key = kind == .publishable ? OpaqueToken.publishableKey() : OpaqueToken.secretKey()
        let hash = OpaqueToken.sha256(key)
        guard
            try await store.rotateAPIKey(
                projectID: record.id, kind: kind, newKeyHash: hash, graceUntil: seconds + graceSeconds, now: seconds,
                origin: EventOrigin(actor: EventActor(kind: .operator, id: "command-line"), clientAddress: nil))
        else { throw ConfigurationError("there is no project \(project)") }
        try await store.saveAPIKeyHint(projectID: record.id, keyHash: hash, hint: hint(kind: kind, key: key))
        return (record, key)
    }
}
