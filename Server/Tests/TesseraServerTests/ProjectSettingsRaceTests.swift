import Foundation
import TesseraTokens
import Testing

@testable import TesseraServer

/// Two changes of a project's settings sent at once both stay, with the gates of
/// ``ProfileRaceTests`` (the project's row held on PostgreSQL, the writer on SQLite).
@Suite("Concurrent patches of a project's settings end as a serial order would")
struct ProjectSettingsRaceTests {
    /// The `changed` lists of the `project.updated` events since `after`, oldest first.
    private static func changes(_ environment: TestEnvironment, after: Int64) async throws -> [[String]] {
        try await environment.store.events(
            EventQuery(projectID: environment.project.project.id, after: after, limit: 100)
        )
        .filter { $0.type == "project.updated" }
        .map {
            let json = try JSONSerialization.jsonObject(with: Data($0.data.utf8)) as? [String: Any]
            return json?["changed"] as? [String] ?? []
        }
    }

    @Test(
        "PATCH /v1/admin/project ∥ PATCH of another setting: both stay, each event names its own",
        arguments: StoreBackend.allCases)
    func twoPatches(backend: StoreBackend) async throws {
        let environment = try await TestEnvironment.make(backend: backend, store: try backend.makeRaceStore())
        let projectID = environment.project.project.id
        try await environment.withApp { client in
            // Both requests authenticate with the project as cached before either saves.
            #expect(try await client.admin(.get, "/v1/admin/project").status == .ok)
            let mark =
                try await environment.store.events(EventQuery(projectID: projectID, after: 0, limit: 1000)).last?
                .sequence ?? 0
            let (first, second) = try await race(
                environment.store, holding: [.project(projectID)],
                { try await client.admin(.patch, "/v1/admin/project", body: #"{"leeway_seconds":30}"#) },
                then: {
                    try await client.admin(.patch, "/v1/admin/project", body: #"{"anonymous_session_minutes":60}"#)
                })
            #expect(first.status == .ok && second.status == .ok)
            let settings = try #require(try await environment.store.project(id: projectID)).settings
            #expect(settings.leewaySeconds == 30, "the second patch did not put the first's setting back")
            #expect(settings.anonymousSessionMinutes == 60)
            #expect(
                try await Self.changes(environment, after: mark) == [["leeway_seconds"], ["anonymous_session_minutes"]])
        }
    }
}
