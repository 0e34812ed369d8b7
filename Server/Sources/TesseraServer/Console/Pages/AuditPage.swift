/// The audit log (`GET /console/audit`): changes made with the secret key or by operators, newest
/// first, with its filters, the CSV link and the pager; for owners, the audit of operator accounts.
struct AuditPage: ConsolePage {
    /// The query as asked for (the filters' fields show it).
    var query: ConsoleForm
    /// The filters asked for, carried by the pager and the CSV link.
    var filters: [(String, String?)]
    /// This page of entries, newest first.
    var entries: [EventRecord]
    /// The sequence the next page starts before, if any.
    var next: Int64?
    /// Every operator, for the actor filter.
    var operators: [OperatorRecord]
    var operatorEmails: [String: String]
    /// The latest entries of the audit of operator accounts (owners only; empty otherwise).
    var accounts: [OperatorAuditRecord]
    var viewer: ConsoleViewer

    var title: String { "Audit log" }
    var section: ConsoleSection? { .audit }

    func render(_ html: inout HTML) {
        html.element(
            "p", text: "Every change made with the project's secret key or by an operator, newest first.")
        html.element("form", [("method", "get"), ("action", "audit"), ("class", "filters")]) { html in
            ConsoleParts.field(
                &html, id: "type", label: "Type", type: "text", value: query.value("type"), required: false,
                extra: [("list", "event-types")])
            html.element("datalist", [("id", "event-types")]) { html in
                for type in EventTypes.all { html.void("option", [("value", type)]) }
            }
            ConsoleParts.select(
                &html, id: "actor", label: "Actor", selected: query.value("actor"),
                options: [("", "Anyone"), ("secret_key", "Secret API key")]
                    + operators.map { ($0.id, $0.email) })
            ConsoleParts.field(
                &html, id: "profile", label: "Profile ID", type: "text", value: query.value("profile"),
                required: false)
            ConsoleParts.field(
                &html, id: "from", label: "From (UTC)", type: "date", value: query.value("from"), required: false)
            ConsoleParts.field(
                &html, id: "to", label: "To (UTC)", type: "date", value: query.value("to"), required: false)
            html.element("button", [("type", "submit")], text: "Filter")
        }
        html.element("p") { html in
            html.link(
                ConsoleURL("audit.csv", filters), [("id", "audit-csv"), ("download", "")],
                text: filters.isEmpty ? "Download every entry as CSV" : "Download the matching entries as CSV")
        }
        if entries.isEmpty {
            html.element("p", text: filters.isEmpty ? "No entry in the event window." : "No entry matches.")
        } else {
            ConsoleParts.eventTable(
                &html, entries, caption: "Audit entries", showReason: true, operatorEmails: operatorEmails)
        }
        if let next {
            html.element("p", [("class", "pager")]) { html in
                html.link(
                    ConsoleURL("audit", filters + [("cursor", String(next))]), [("rel", "next")],
                    text: "Older entries")
            }
        }
        if viewer.may(.owner) {
            html.element("section", [("aria-labelledby", "accounts-audit-title")]) { html in
                html.element(
                    "h2", [("id", "accounts-audit-title")],
                    text: "Operator accounts: sign-ins, failures, lockouts, invitations, removals (latest 50)")
                ConsoleParts.operatorAuditTable(&html, accounts)
            }
        }
    }
}
