/// The operators (`GET /console/operators`, owners): every operator, whether they are locked out
/// now, the invitation form and the latest entries of the audit of operator accounts; an enrollment
/// link made a moment ago is shown once, from its flash.
struct OperatorsPage: ConsolePage {
    /// An enrollment link made a moment ago: whom it is for and its token.
    var enrollment: (email: String, token: String)?
    /// The console's public address, when configured: the link is shown whole.
    var publicURL: String?
    var accounts: [OperatorRecord]
    /// The emails locked out of sign-in now, and until when.
    var locks: [String: Int64]
    /// The latest entries of the audit of operator accounts, newest first.
    var recent: [OperatorAuditRecord]
    var viewer: ConsoleViewer
    var refusal: ConsoleRefusal?

    var title: String { "Operators" }
    var section: ConsoleSection? { .operators }

    func render(_ html: inout HTML) {
        if let (email, token) = enrollment {
            html.element("div", [("class", "secret"), ("role", "region"), ("aria-label", "Enrollment link")]) {
                html in
                html.element("p") { html in
                    html.text("Send this enrollment link to ")
                    html.element("strong", text: email)
                    html.text(". It works once, for 15 minutes, and is shown only now (do not open it yourself):")
                }
                let relative = ConsoleURL("enroll", [("token", token)]).relative
                let absolute = publicURL.map {
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
        ConsoleParts.table(
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
                ConsoleParts.actionForm(
                    &html, action: "operator-unlock", csrf: viewer.csrf, fields: [("email", account.email)],
                    button: "Unlock", label: "Unlock sign-in for \(account.email)")
            }
            html.element("td") { html in
                if account.id == viewer.operatorID {
                    html.text("you")
                } else {
                    ConsoleParts.passwordForm(
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
                ConsoleParts.field(&html, id: "email", label: "Email", type: "email", refusal: inviting)
                ConsoleParts.select(
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
            ConsoleParts.operatorAuditTable(&html, recent)
        }
    }
}
