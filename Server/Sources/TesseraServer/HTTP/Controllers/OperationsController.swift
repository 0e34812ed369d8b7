import Hummingbird
import NIOCore

/// What operators and app backends read without a credential: health, metrics, the contract, JWKS.
struct OperationsController: Sendable {
    let core: TesseraCore

    /// `GET /health`: 200 when the database answers, else 503.
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

    /// `GET /metrics`: the Prometheus text format.
    func metricsExposition(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        core.metrics.syncEvents(core.store.eventTally)
        if let oldest = try? await core.store.oldestPendingWebhookDeliveries() {
            core.metrics.syncWebhookQueue(oldest, now: core.currentTime().seconds)
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
