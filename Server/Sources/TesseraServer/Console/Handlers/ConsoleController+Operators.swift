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
        let viewer = request.viewer
        let refusal = request.refusal
        return page(request, title: "Operators", section: .operators, message: flash.message) { html in
            if let fields = flash.fields, let email = fields["email"], let token = fields["token"] {
                html.element("div", [("class", "secret"), ("role", "region"), ("aria-label", "Enrollment link")]) {
                    html in
                    html.element("p") { html in
                        html.text("Send this enrollment link to ")
                        html.element("strong", text: email)
                        html.text(". It works once, for 15 minutes, and is shown only now (do not open it yourself):")
                    }
                    let relative = ConsoleURL("enroll", [("token", token)]).relative
                    let absolute = core.configuration.publicURL.map {
                        OperatorAccounts.enrollmentLink(base: $0, token: token)
                    }
                    html.element("p") { html in
                        html.element(
                            "code", [("id", "enrollment-link"), ("data-relative", relative)], text: absolute ?? relative
                        )
                    }
                    if absolute == nil {
                        html.element(
                            "p", [("class", "small")],
                            text:
                                "The link is relative to this page: put this console's address (…/console/) before it, or start the server with --public-url to see it whole."
                        )
                    }
                }
            }
            Self.table(
                &html, caption: "Operators of this deployment",
                headers: ["Email", "Role", "Enrolled", "Two-step", "Last sign-in", "Sign-in", "Action"], rows: accounts
            ) { html, account in
                html.element("td", text: account.email)
                html.element("td", text: account.role.rawValue)
                html.element("td") { ConsoleFormat.time(account.enrolledAt, in: &$0) }
                html.element("td", text: account.totpSecret == nil ? "no" : "TOTP")
                html.element("td") { ConsoleFormat.time(account.lastLoginAt, in: &$0) }
                html.element("td") { html in
                    if let until = locks[account.email] {
                        html.text("locked until \(OperatorAccounts.clockTime(until)) ")
                    } else {
                        html.text("open ")
                    }
                    Self.actionForm(
                        &html, action: "operator-unlock", csrf: viewer.csrf, fields: [("email", account.email)],
                        button: "Unlock", label: "Unlock sign-in for \(account.email)")
                }
                html.element("td") { html in
                    if account.id == viewer.operatorID {
                        html.text("you")
                    } else {
                        Self.passwordForm(
                            &html, action: "operator-remove", csrf: viewer.csrf, fields: [("operator_id", account.id)],
                            button: "Remove", id: "remove-\(account.id)", danger: true, refusal: refusal)
                    }
                }
            }
            html.element("section", [("aria-labelledby", "new-operator-title")]) { html in
                html.element("h2", [("id", "new-operator-title")], text: "Invite an operator")
                let inviting = refusal?.matching("operator-create")
                html.element("form", [("method", "post"), ("action", "operator-create"), ("class", "inline-form")]) {
                    html in
                    html.hidden("csrf", viewer.csrf)
                    Self.field(&html, id: "email", label: "Email", type: "email", refusal: inviting)
                    Self.select(
                        &html, id: "role", label: "Role", selected: inviting?.form["role"] ?? "viewer",
                        options: OperatorRole.allCases.map { ($0.rawValue, $0.rawValue) })
                    html.element("button", [("type", "submit")], text: "Create enrollment link")
                }
                html.element(
                    "p", [("class", "small")],
                    text:
                        "viewer: reads, emails masked · support: + ends sessions, removes devices · admin: + settings, keys, webhooks, block, erase · owner: + operators"
                )
            }
            html.element("section", [("aria-labelledby", "operator-audit-title")]) { html in
                html.element("h2", [("id", "operator-audit-title")], text: "Sign-ins and account changes")
                Self.operatorAuditTable(&html, Array(recent.prefix(50)))
            }
        }
    }

    /// The audit of operator accounts as a table, newest first.
    static func operatorAuditTable(_ html: inout HTML, _ entries: [OperatorAuditRecord]) {
        guard !entries.isEmpty else {
            html.element("p", text: "Nothing yet.")
            return
        }
        table(&html, caption: nil, headers: ["At", "What", "Operator", "By", "Address", "Detail"], rows: entries) {
            html, entry in
            html.element("td") { ConsoleFormat.time(entry.createdAt, in: &$0) }
            html.element("td") { $0.element("code", text: entry.kind.rawValue) }
            html.element("td", text: entry.operatorEmail)
            html.element("td", text: entry.actorEmail ?? "—")
            html.element("td", text: entry.clientAddress ?? "—")
            html.element("td", text: entry.detail ?? "—")
        }
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
            let (account, token) = try await core.operators.create(email: request.form.value("email") ?? "", role: role)
            request.context.logger.notice(
                "operator invited", metadata: ["operator": "\(account.id)", "by": "\(request.viewer.operatorID)"])
            await core.operators.audit(
                .invited, email: account.email, actorEmail: request.viewer.email,
                clientAddress: addresses.key(request.request, context: request.context), detail: "role \(role.rawValue)"
            )
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
        guard let account = try await core.store.operatorRecord(id: id), try await core.operators.remove(id: id)
        else { throw CoreError.notFound }
        request.context.logger.notice(
            "operator removed", metadata: ["operator": "\(id)", "by": "\(request.viewer.operatorID)"])
        await core.operators.audit(
            .removed, email: account.email, actorEmail: request.viewer.email,
            clientAddress: addresses.key(request.request, context: request.context))
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
        let viewer = request.viewer
        return page(request, title: "Identity-token inspector", section: .inspector, status: status) { html in
            html.element(
                "p",
                text:
                    "Paste an identity token your backend minted: every check identify makes, with its verdict, against this project's secrets and settings. The token is not stored or logged."
            )
            html.element("form", [("method", "post"), ("action", "inspector"), ("class", "stack")]) { html in
                html.hidden("csrf", viewer.csrf)
                html.element("label", [("for", "token")], text: "Identity token")
                html.element(
                    "textarea", [("id", "token"), ("name", "token"), ("required", ""), ("spellcheck", "false")]
                ) { _ in }
                html.element("button", [("type", "submit")], text: "Inspect")
            }
            guard let inspection else { return }
            html.element("section", [("aria-labelledby", "verdict-title")]) { html in
                html.element("h2", [("id", "verdict-title")], text: "Verdict")
                if let error = inspection.error {
                    let code = ErrorCode(rawValue: error.code.rawValue)
                    html.element("p", [("id", "verdict"), ("data-code", code.rawValue)]) { html in
                        html.text("identify would answer ")
                        html.element("strong", text: "\(APIError.status(of: code).code) \(code.rawValue)")
                        html.text(": \(error.message)")
                    }
                } else if let claims = inspection.claims {
                    html.element("p", [("id", "verdict"), ("data-code", "ok")]) { html in
                        html.text("identify would accept it for ")
                        html.element("strong", text: claims.subject)
                        html.text(inspection.keyID.map { ", signed with \($0)." } ?? ".")
                    }
                }
                Self.table(
                    &html, caption: "Checks, in the verifier's order", headers: ["Check", "Verdict", "Detail"],
                    rows: inspection.checks
                ) {
                    html, check in
                    html.element("td", text: check.name)
                    html.element("td", [("class", "verdict-\(check.verdict.rawValue)")], text: check.verdict.rawValue)
                    html.element("td", text: check.detail)
                }
                if let header = inspection.header {
                    html.element("h3", text: "Header (decoded, not trusted)")
                    html.element("pre") { $0.element("code", text: header) }
                }
                if let payload = inspection.payload {
                    html.element("h3", text: "Payload (decoded, not trusted)")
                    html.element("pre") { $0.element("code", text: payload) }
                }
            }
        }
    }
}
