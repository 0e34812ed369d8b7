import Foundation
import HTTPTypes
import Hummingbird
import TesseraTokens

/// The operators page (owners) and the identity-token inspector.
extension ConsoleController {
    func operatorPages() -> [(HTTPRequest.Method, String, Requirement, Handler)] {
        [
            (.get, "/console/operators", Requirement(role: .owner), operators),
            (.post, "/console/operator-create", Requirement(role: .owner), createOperator),
            (.post, "/console/operator-remove", Requirement(role: .owner, password: true), removeOperator),
        ]
    }

    func inspectorPages() -> [(HTTPRequest.Method, String, Requirement, Handler)] {
        [
            (.get, "/console/inspector", Requirement(), inspector),
            (.post, "/console/inspector", Requirement(), inspect),
        ]
    }

    // MARK: Operators

    /// `GET /console/operators`
    func operators(_ request: ConsoleRequest) async throws -> Response {
        try await operators(request, message: nil, link: nil)
    }

    private func operators(_ request: ConsoleRequest, message: ConsoleMessage?, link: (String, String)?) async throws
        -> Response
    {
        let accounts = try await core.store.operators()
        let viewer = request.viewer
        return page(request, title: "Operators", section: .operators, message: message) { html in
            if let (email, token) = link {
                html.element("div", [("class", "secret"), ("role", "region"), ("aria-label", "Enrollment link")]) {
                    html in
                    html.element("p") { html in
                        html.text("Send this enrollment link to ")
                        html.element("strong", text: email)
                        html.text(". It works once, for 15 minutes:")
                    }
                    html.element("p") { html in
                        html.link(
                            ConsoleURL("enroll", [("token", token)]), [("id", "enrollment-link")],
                            text: "enrollment link")
                    }
                }
            }
            Self.table(
                &html, caption: "Operators of this deployment",
                headers: ["Email", "Role", "Enrolled", "Two-step", "Last sign-in", "Action"], rows: accounts
            ) { html, account in
                html.element("td", text: account.email)
                html.element("td", text: account.role.rawValue)
                html.element("td") { ConsoleFormat.time(account.enrolledAt, in: &$0) }
                html.element("td", text: account.totpSecret == nil ? "no" : "TOTP")
                html.element("td") { ConsoleFormat.time(account.lastLoginAt, in: &$0) }
                html.element("td") { html in
                    if account.id == viewer.operatorID {
                        html.text("you")
                    } else {
                        Self.passwordForm(
                            &html, action: "operator-remove", csrf: viewer.csrf, fields: [("operator_id", account.id)],
                            button: "Remove", id: "remove-\(account.id)", danger: true)
                    }
                }
            }
            html.element("section", [("aria-labelledby", "new-operator-title")]) { html in
                html.element("h2", [("id", "new-operator-title")], text: "Invite an operator")
                html.element("form", [("method", "post"), ("action", "operator-create"), ("class", "inline-form")]) {
                    html in
                    html.hidden("csrf", viewer.csrf)
                    Self.field(&html, id: "email", label: "Email", type: "email")
                    Self.select(
                        &html, id: "role", label: "Role", selected: "viewer",
                        options: OperatorRole.allCases.map { ($0.rawValue, $0.rawValue) })
                    html.element("button", [("type", "submit")], text: "Create enrollment link")
                }
                html.element(
                    "p", [("class", "small")],
                    text:
                        "viewer: reads, emails masked · support: + ends sessions, removes devices · admin: + settings, keys, webhooks, block, erase · owner: + operators"
                )
            }
        }
    }

    /// `POST /console/operator-create`: shows the enrollment link once.
    func createOperator(_ request: ConsoleRequest) async throws -> Response {
        guard let role = request.form["role"].flatMap(OperatorRole.init(rawValue:)) else {
            throw CoreError.invalidRequest("role must be owner, admin, support or viewer.")
        }
        do {
            let (account, token) = try await core.operators.create(email: request.form.value("email") ?? "", role: role)
            request.context.logger.notice(
                "operator created", metadata: ["operator": "\(account.id)", "by": "\(request.viewer.operatorID)"])
            return try await operators(
                request, message: .notice("\(account.email) can now enroll as \(role.rawValue)."),
                link: (account.email, token))
        } catch let error as ConsoleError {
            throw Self.failure(error)
        }
    }

    /// `POST /console/operator-remove` (password); an owner cannot remove themselves.
    func removeOperator(_ request: ConsoleRequest) async throws -> Response {
        let id = request.form["operator_id"] ?? ""
        guard id != request.viewer.operatorID else {
            throw CoreError.invalidRequest("You cannot remove yourself; ask another owner.")
        }
        guard try await core.operators.remove(id: id) else { throw CoreError.notFound }
        request.context.logger.notice(
            "operator removed", metadata: ["operator": "\(id)", "by": "\(request.viewer.operatorID)"])
        return ConsoleHTTP.redirect(ConsoleURL("operators", [("notice", "operator-removed")]))
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
