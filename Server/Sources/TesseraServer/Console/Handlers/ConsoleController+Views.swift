import Foundation
import Synchronization

/// The pieces pages share: tables, selects, one-button action forms, the event table.
extension ConsoleController {
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
}

extension ConsoleController {
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
}
