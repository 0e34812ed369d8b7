import Hummingbird
import NIOCore

/// What operators and app backends read without a credential: health, metrics, the contract, JWKS.
struct OperationsController: Sendable {
    let core: TesseraCore

    /// `GET /health`: 200 when the database answers, else 503 (the v1 check; `/health/ready` is the
    /// one for load balancers).
    func health(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        do {
            try await core.store.ping()
        } catch {
            throw CoreError(.serviceUnavailable, "The database does not answer.")
        }
        return .json { writer in
            writer.objectStart()
            writer.field("status", "ok")
            writer.objectEnd()
        }
    }

    /// `GET /health/live`: 200 while the process answers; no database access.
    func live(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        .json { writer in
            writer.objectStart()
            writer.field("status", "ok")
            writer.objectEnd()
        }
    }

    /// `GET /health/ready`: 200 with the readiness object when the node may take traffic; else 503 in
    /// the error shape, the same object under `error.readiness` (``Readiness``). Both carry the
    /// release and the schema versions.
    func ready(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let report = await core.readiness.check()
        guard report.isReady else {
            let body = APIError.body(code: .serviceUnavailable, message: report.message) { writer in
                writer.key("readiness")
                Self.write(report, to: &writer)
            }
            return .json(.serviceUnavailable, body: ByteBuffer(bytes: body))
        }
        return .json { writer in Self.write(report, to: &writer) }
    }

    /// The readiness object: status, versions, each check, whether the node drains.
    static func write(_ report: Readiness.Report, to writer: inout JSONWriter) {
        writer.objectStart()
        writer.field("status", report.status)
        writer.field("version", TesseraRelease.version)
        writer.field("schema_version", report.expectedSchemaVersion)
        writer.key("database_schema_version")
        if let seen = report.databaseSchemaVersion { writer.integer(seen) } else { writer.null() }
        writer.key("checks")
        writer.objectStart()
        writer.field("database", report.database.rawValue)
        writer.field("migrations", report.migrations.rawValue)
        writer.field("master_key", report.masterKey.rawValue)
        writer.objectEnd()
        writer.field("draining", report.draining)
        writer.objectEnd()
    }

    /// The `HEAD` of a `GET` handler: the same status and headers, no body (an error too).
    static func head(_ get: @escaping Endpoint.Handler) -> Endpoint.Handler {
        { request, context in
            do {
                return try await get(request, context).createHeadResponse()
            } catch let error as CoreError {
                return APIError(error).response().createHeadResponse()
            }
        }
    }

    /// `GET /metrics`: the Prometheus text format.
    func metricsExposition(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        core.metrics.syncEvents(core.store.eventTally)
        if let oldest = try? await core.store.oldestPendingWebhookDeliveries() {
            core.metrics.syncWebhookQueue(oldest, now: core.currentTime().seconds)
        }
        // Active users from the last count (made in the background, never on the scrape's path).
        if let projects = try? await core.store.allProjects() {
            let now = core.currentTime().seconds
            for project in projects {
                if let summary = core.activeUsers.summary(projectID: project.id, now: now) {
                    core.metrics.syncActivity(projectID: project.id, summary: summary.value)
                }
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: core.metrics.exposition())))
    }

    /// `GET /openapi.json`
    func openAPI(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        .json(body: ByteBuffer(string: OpenAPIDocument.json))
    }

    /// `GET /v1/projects/{project_id}/jwks.json`: the keys that verify the project's session JWTs.
    ///
    /// `Cache-Control: no-store`, like every `/v1` answer: a rotated signing key signs at once, and a
    /// backend that meets its `kid` refetches the JWKS; an HTTP cache between them would hand it the old
    /// set for as long as it kept it. Verifiers cache the keys themselves (and refetch on an unknown `kid`).
    func jwks(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let projectID = try context.parameters.require("project_id")
        guard InputRules.isIdentifier(projectID, prefix: "prj_"),
            let runtime = try await core.projects.runtime(projectID: projectID)
        else { throw CoreError.notFound }
        return .json(body: ByteBuffer(bytes: runtime.jwksJSON))
    }
}
