import Foundation
import Synchronization

/// The pieces pages share: tables, selects, labelled inputs, one-button action forms, the event
/// table, a session's device key.
enum ConsoleParts {
    /// A table with a header row and one row per element.
    static func table<Row>(
        _ html: inout HTML, caption: String?, headers: [String], rows: [Row], row: (inout HTML, Row) -> Void
    ) {
        html.element("div", [("class", "table-wrap")]) { html in
            html.element("table") { html in
                if let caption { html.element("caption", text: caption) }
                html.element("thead") { html in
                    html.element("tr") { html in
                        for header in headers { html.element("th", [("scope", "col")], text: header) }
                    }
                }
                html.element("tbody") { html in
                    for element in rows {
                        html.element("tr") { row(&$0, element) }
                    }
                }
            }
        }
    }

    /// A labelled select; `selected` names the chosen value.
    static func select(
        _ html: inout HTML, id: StaticString, label: String, selected: String?, options: [(String, String)]
    ) {
        html.element("label", [("for", id.description)], text: label)
        html.element("select", [("id", id.description), ("name", id.description)]) { html in
            for (value, text) in options {
                html.element(
                    "option", [("value", value), ("selected", (selected ?? "") == value ? "" : nil)], text: text)
            }
        }
    }

    /// A form of hidden fields and one button, posting to `action` with the CSRF token.
    /// `label` names the button for assistive technology when its text alone is ambiguous in a table.
    static func actionForm(
        _ html: inout HTML, action: String, csrf: String, fields: [(StaticString, String)], button: String,
        label: String?, danger: Bool = false
    ) {
        html.element("form", [("method", "post"), ("action", action), ("class", "inline")]) { html in
            html.hidden("csrf", csrf)
            for (name, value) in fields { html.hidden(name, value) }
            html.element(
                "button", [("type", "submit"), ("aria-label", label), ("class", danger ? "danger" : nil)],
                text: button)
        }
    }

    /// Events as a table: sequence, type, time, actor, profile, data.
    static func eventTable(
        _ html: inout HTML, _ events: [EventRecord], caption: String, showReason: Bool = false,
        operatorEmails: [String: String] = [:]
    ) {
        let headers =
            ["Sequence", "Type", "At", "Actor", "Profile", "Data"] + (showReason ? ["Address", "Reason"] : [])
        table(&html, caption: caption, headers: headers, rows: events) { html, event in
            html.element("td", text: String(event.sequence))
            html.element("td") { $0.element("code", text: event.type) }
            html.element("td") { ConsoleFormat.time(event.createdAt, in: &$0) }
            html.element("td") { html in
                // An operator by their email (the ID on hover); others by kind and ID.
                if event.actor.kind == .operator, let id = event.actor.id, let email = operatorEmails[id] {
                    html.element("span", [("title", id)], text: email)
                } else {
                    html.text(event.actor.kind.rawValue + (event.actor.id.map { " " + $0 } ?? ""))
                }
            }
            html.element("td") { html in
                if let profileID = event.profileID {
                    html.link(ConsoleURL("profile", [("id", profileID)]), text: profileID)
                } else {
                    html.text("—")
                }
            }
            html.element("td") { html in readableData(&html, event.data) }
            if showReason {
                html.element("td", text: event.clientAddress ?? "—")
                html.element("td", text: event.reason ?? "—")
            }
        }
    }

    /// An event's data as `name: value` lines (its raw JSON when it is not a flat object).
    static func readableData(_ html: inout HTML, _ data: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any], !object.isEmpty
        else {
            html.element("code", [("class", "data")], text: data)
            return
        }
        html.element("dl", [("class", "data")]) { html in
            for key in object.keys.sorted() {
                let value = object[key]
                let text: String
                switch value {
                case let list as [Any]: text = list.map { "\($0)" }.joined(separator: ", ")
                case is NSNull: text = "—"
                case let value?: text = "\(value)"
                case nil: text = "—"
                }
                html.element("div") { html in
                    html.element("dt", text: key.replacingOccurrences(of: "_", with: " "))
                    html.element("dd", text: text)
                }
            }
        }
    }

    /// A labelled input. When `refusal` is about its form, the input shows what was typed (never a
    /// password) and, when it is the field at fault, is marked invalid, takes the focus and has the
    /// message beside it.
    static func field(
        _ html: inout HTML, id: StaticString, label: String, type: String, value: String? = nil,
        autocomplete: String? = nil, required: Bool = true, extra: HTML.Attributes = [],
        refusal: ConsoleRefusal? = nil
    ) {
        input(
            &html, id: id.description, name: id.description, label: label, type: type, value: value,
            autocomplete: autocomplete, required: required, extra: extra, refusal: refusal)
    }

    /// A labelled input whose `id` and `name` differ (several forms of a page share a name).
    static func input(
        _ html: inout HTML, id: String, name: String, label: String, type: String, value: String? = nil,
        autocomplete: String? = nil, required: Bool = true, extra: HTML.Attributes = [],
        refusal: ConsoleRefusal? = nil
    ) {
        let kept = type == "password" ? nil : refusal?.kept(name)
        let invalid = refusal != nil && refusal?.field == name
        html.element("label", [("for", id)], text: label)
        html.void(
            "input",
            [
                ("id", id), ("name", name), ("type", type), ("value", kept ?? value),
                ("autocomplete", autocomplete), ("required", required ? "" : nil),
                ("aria-invalid", invalid ? "true" : nil), ("aria-describedby", invalid ? id + "-error" : nil),
                ("autofocus", invalid ? "" : nil),
            ] + extra)
        if invalid, let refusal { fieldError(&html, id: id, refusal) }
    }

    /// The message of a refusal beside its field.
    static func fieldError(_ html: inout HTML, id: String, _ refusal: ConsoleRefusal) {
        html.element(
            "p", [("id", id + "-error"), ("class", "field-error"), ("data-field-code", refusal.code)],
            text: refusal.message)
    }

    // MARK: A session's device key (RFC 9449)

    /// The session's device key in a table cell: `not bound`, or the key's RFC 7638 thumbprint
    /// shortened (the whole of it in the title) and its declared tier.
    static func binding(_ session: SessionRecord, in html: inout HTML) {
        guard let jkt = session.jkt else {
            html.text("not bound")
            return
        }
        html.element("code", [("class", "jkt"), ("title", jkt)], text: shortThumbprint(jkt))
        html.text(" · " + tierName(session.keyTier))
    }

    /// The first 10 characters of a thumbprint and an ellipsis: enough to tell a profile's keys apart.
    static func shortThumbprint(_ jkt: String) -> String {
        jkt.count > 12 ? String(jkt.prefix(10)) + "…" : jkt
    }

    /// A key tier as an operator reads it; the client declares it, the server does not prove it.
    static func tierName(_ tier: SessionRecord.KeyTier?) -> String {
        switch tier {
        case .secureEnclave: "Secure Enclave"
        case .software: "software key"
        case nil: "tier not declared"
        }
    }

    /// A form of hidden fields, the operator's password and one button; `refusal`, when about this
    /// form (same action and hidden fields), puts its message beside the password.
    static func passwordForm(
        _ html: inout HTML, action: String, csrf: String, fields: [(StaticString, String)], button: String, id: String,
        danger: Bool, refusal: ConsoleRefusal? = nil
    ) {
        let refusal = refusal?.matching(action, fields)
        html.element("form", [("method", "post"), ("action", action), ("class", "inline-form")]) { html in
            html.hidden("csrf", csrf)
            for (name, value) in fields { html.hidden(name, value) }
            ConsoleParts.input(
                &html, id: "\(id)-password", name: "password", label: "Your password", type: "password",
                autocomplete: "current-password", refusal: refusal)
            if let refusal, refusal.field == nil { Self.fieldError(&html, id: "\(id)-form", refusal) }
            html.element("button", [("type", "submit"), ("class", danger ? "danger" : nil)], text: button)
        }
    }

    /// The audit of operator accounts as a table, newest first.
    static func operatorAuditTable(_ html: inout HTML, _ entries: [OperatorAuditRecord]) {
        guard !entries.isEmpty else {
            html.element("p", text: "Nothing yet.")
            return
        }
        ConsoleParts.table(
            &html, caption: nil, headers: ["At", "What", "Operator", "By", "Address", "Detail"], rows: entries
        ) {
            html, entry in
            html.element("td") { ConsoleFormat.time(entry.createdAt, in: &$0) }
            html.element("td") { $0.element("code", text: entry.kind.rawValue) }
            html.element("td", text: entry.operatorEmail)
            html.element("td", text: entry.actorEmail ?? "—")
            html.element("td", text: entry.clientAddress ?? "—")
            html.element("td", text: entry.detail ?? "—")
        }
    }
}
