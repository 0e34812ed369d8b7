import Foundation
import HTTPTypes
import Hummingbird
import TesseraTokens

/// The operators page (owners) and the identity-token inspector.
extension ConsoleController {
    func operatorPages() -> [(HTTPRequest.Method, String, Requirement, Handler)] {
        [
            (.get, "/console/operators", Requirement(role: .owner), operators),
            (.post, "/console/operator-create", Requirement(role: .owner, back: .operators), createOperator),
            (
                .post, "/console/operator-remove", Requirement(role: .owner, password: true, back: .operators),
                removeOperator
            ),
            (.post, "/console/operator-unlock", Requirement(role: .owner, back: .operators), unlockOperator),
        ]
    }

    func inspectorPages() -> [(HTTPRequest.Method, String, Requirement, Handler)] {
        [
            (.get, "/console/inspector", Requirement(), inspector),
            (.post, "/console/inspector", Requirement(), inspect),
        ]
    }

    // MARK: Operators

    /// `GET /console/operators`: every operator, whether they are locked out now, the invitation form,
    /// and the latest entries of the audit of operator accounts. An enrollment link made a moment ago
    /// is shown once, from its flash.
    func operators(_ request: ConsoleRequest) async throws -> Response {
        let accounts = try await core.store.operators()
        let recent = try await core.store.operatorAudit(before: nil, limit: 200)
        let flash = try await takeFlash(request)
        let now = core.currentTime().seconds
        let locks = Self.lockedUntil(recent, now: now)
        return page(
            request,
            OperatorsPage(
                enrollment: flash.fields.flatMap { fields in
                    fields["email"].flatMap { email in fields["token"].map { (email, $0) } }
                },
                publicURL: core.configuration.publicURL, accounts: accounts, locks: locks,
                recent: Array(recent.prefix(50)),
                viewer: request.viewer, refusal: request.refusal),
            message: flash.message)
    }

    /// The emails locked out of sign-in now (from some address), and until when: a lockout in the
    /// current window that no unlock followed.
    static func lockedUntil(_ entries: [OperatorAuditRecord], now: Int64) -> [String: Int64] {
        let window = RateLimitWindow(containing: now, seconds: OperatorAccounts.failureWindowSeconds)
        var locks: [String: Int64] = [:]
        var unlocked: Set<String> = []
        // Newest first: an unlock hides every lockout before it.
        for entry in entries where entry.createdAt >= window.start {
            switch entry.kind {
            case .unlocked: unlocked.insert(entry.operatorEmail)
            case .locked where entry.detail?.hasPrefix("until") == true:
                if !unlocked.contains(entry.operatorEmail), locks[entry.operatorEmail] == nil {
                    locks[entry.operatorEmail] = window.end
                }
            default: break
            }
        }
        return locks
    }

    /// `POST /console/operator-create`: the enrollment link is shown once, on the Operators page the
    /// redirect lands on.
    func createOperator(_ request: ConsoleRequest) async throws -> Response {
        guard let role = request.form["role"].flatMap(OperatorRole.init(rawValue:)) else {
            throw ConsoleFailure.invalid("role", "Choose a role: owner, admin, support or viewer.")
        }
        do {
            let (account, token) = try await core.operators.create(
                email: request.form.value("email") ?? "", role: role, actorID: request.viewer.operatorID,
                actorEmail: request.viewer.email,
                clientAddress: addresses.key(request.request, context: request.context))
            return try await redirect(
                request, to: ConsoleURL("operators"),
                flash: [
                    ("email", account.email), ("token", token),
                    ("notice", "\(account.email) can now enroll as \(role.rawValue)."),
                ])
        } catch let error as ConsoleError {
            var failure = Self.failure(error)
            failure.field = "email"
            throw failure
        }
    }

    /// `POST /console/operator-remove` (password); an owner cannot remove themselves.
    func removeOperator(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["operator_id"] ?? ""
        guard id != request.viewer.operatorID else {
            throw ConsoleFailure(
                status: .badRequest, code: "invalid_request",
                message: "You cannot remove yourself; ask another owner.", field: nil)
        }
        guard
            try await core.operators.remove(
                id: id, actorID: request.viewer.operatorID, actorEmail: request.viewer.email,
                clientAddress: addresses.key(request.request, context: request.context))
        else { throw CoreError.notFound }
        return ConsoleHTTP.redirect(ConsoleURL("operators", [("notice", "operator-removed")]))
    }

    /// `POST /console/operator-unlock`: clears the operator's failed sign-ins, from every address.
    func unlockOperator(_ request: ConsoleRequest) async throws -> Response {
        do {
            try await core.operators.unlock(
                email: request.form["email"] ?? "", actorEmail: request.viewer.email,
                clientAddress: addresses.key(request.request, context: request.context))
        } catch let error as ConsoleError {
            throw Self.failure(error)
        }
        return ConsoleHTTP.redirect(ConsoleURL("operators", [("notice", "unlocked")]))
    }

    // MARK: Inspector

    /// `GET /console/inspector`
    func inspector(_ request: ConsoleRequest) async throws -> Response {
        inspectorPage(request, inspection: nil, status: .ok)
    }

    /// `POST /console/inspector`: every check of the project's verifier on the pasted token, now.
    /// The token is neither stored nor logged, nor written back into the page.
    func inspect(_ request: ConsoleRequest) async throws -> Response {
        let token = (request.form["token"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.utf8.count <= 16_384 else {
            throw CoreError.invalidRequest("Paste an identity token (at most 16 KB).")
        }
        guard let verifier = request.runtime.verifier else {
            throw CoreError(.init(rawValue: "invalid_signature"), "The project has no identity secret.")
        }
        return inspectorPage(request, inspection: verifier.inspect(token, now: core.configuration.now()), status: .ok)
    }

    private func inspectorPage(
        _ request: ConsoleRequest, inspection: IdentityTokenInspection?, status: HTTPResponse.Status
    ) -> Response {
        let refusalStatus = inspection?.error.map { APIError.status(of: ErrorCode(rawValue: $0.code.rawValue)).code }
        return page(
            request, InspectorPage(inspection: inspection, refusalStatus: refusalStatus, viewer: request.viewer),
            status: status)
    }
}
