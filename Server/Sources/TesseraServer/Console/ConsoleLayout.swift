import Foundation

/// The operator looking at a console page and the project it shows: what every page's frame
/// needs (navigation by role, the search box, the project switcher, the CSRF token of its forms).
struct ConsoleViewer: Sendable {
    var operatorID: String
    var email: String
    var role: OperatorRole
    /// The CSRF token of the operator's console session, put in every form.
    var csrf: String
    /// Every project of the deployment, for the switcher.
    var projects: [ProjectRecord]
    /// The project the pages show.
    var project: ProjectRecord

    /// Whether the operator's role includes `role`'s rights.
    func may(_ role: OperatorRole) -> Bool { self.role >= role }

    /// An email as this operator may see it: viewers see it masked (`j•••@example.com`).
    func shown(email: String?) -> String? {
        guard let email else { return nil }
        guard !may(.support) else { return email }
        return Self.mask(email)
    }

    /// `jane@example.com` → `j•••@example.com`.
    static func mask(_ email: String) -> String {
        guard let at = email.lastIndex(of: "@"), at > email.startIndex else { return "•••" }
        return String(email[email.startIndex]) + "•••" + email[at...]
    }
}

/// A page of the console menu.
enum ConsoleSection: String, Sendable, CaseIterable {
    case overview, profiles, sessions, inspector, keys, settings, webhooks, audit, operators

    var title: String {
        switch self {
        case .overview: "Overview"
        case .profiles: "Profiles"
        case .sessions: "Sessions"
        case .inspector: "Token inspector"
        case .keys: "Keys"
        case .settings: "Settings"
        case .webhooks: "Webhooks"
        case .audit: "Audit log"
        case .operators: "Operators"
        }
    }

    var url: ConsoleURL { ConsoleURL(self == .overview ? "" : rawValue) }

    /// The least role that sees the page in the menu.
    var role: OperatorRole { self == .operators ? .owner : .viewer }
}

/// A notice or an error shown at the top of a page.
struct ConsoleMessage: Sendable {
    enum Kind: Sendable { case notice, error }
    var kind: Kind
    var text: String
    /// The error code, for errors (`data-code`, which tests and scripts read).
    var code: String?

    static func notice(_ text: String) -> ConsoleMessage { ConsoleMessage(kind: .notice, text: text, code: nil) }
    static func error(_ code: String, _ text: String) -> ConsoleMessage {
        ConsoleMessage(kind: .error, text: text, code: code)
    }
}

/// The frame of every console page: head, skip link, menu, search, project switcher, sign-out,
/// then the page's own content in `main`.
enum ConsoleLayout {
    /// A full page for a signed-in operator.
    static func page(
        title: String, section: ConsoleSection?, viewer: ConsoleViewer, message: ConsoleMessage? = nil,
        content: (inout HTML) -> Void
    ) -> [UInt8] {
        var html = HTML()
        head(&html, title: title)
        html.open("body")
        html.element("a", [("class", "skip"), ("href", "#main")], text: "Skip to content")
        html.element("header", [("class", "top")]) { html in
            html.element("a", [("class", "brand"), ("href", "./")], text: "Tessera")
            html.element("nav", [("aria-label", "Console")]) { html in
                html.open("ul")
                for item in ConsoleSection.allCases where viewer.may(item.role) {
                    html.element("li") { html in
                        html.link(
                            item.url, [("aria-current", item == section ? "page" : nil)], text: item.title)
                    }
                }
                html.close("ul")
            }
            html.element("form", [("role", "search"), ("action", "search"), ("method", "get"), ("class", "search")]) {
                html in
                html.element("label", [("for", "search"), ("class", "visually-hidden")], text: "Find anything")
                html.void(
                    "input",
                    [
                        ("id", "search"), ("name", "q"), ("type", "search"), ("required", ""),
                        ("placeholder", "usr_…, ses_…, dev_…, installation ID, external ID or email"),
                        ("autocomplete", "off"),
                    ])
                html.element("button", [("type", "submit")], text: "Search")
            }
            html.element("div", [("class", "who")]) { html in
                if viewer.projects.count > 1 {
                    html.element("form", [("action", "project"), ("method", "post"), ("class", "switch")]) { html in
                        html.hidden("csrf", viewer.csrf)
                        html.element("label", [("for", "project")], text: "Project")
                        html.element("select", [("id", "project"), ("name", "project_id")]) { html in
                            for project in viewer.projects {
                                html.element(
                                    "option",
                                    [("value", project.id), ("selected", project.id == viewer.project.id ? "" : nil)],
                                    text: project.name)
                            }
                        }
                        html.element("button", [("type", "submit")], text: "Switch")
                    }
                } else {
                    html.element("span", [("class", "project")], text: viewer.project.name)
                }
                html.element("span", [("class", "operator")]) { html in
                    html.text(viewer.email)
                    html.text(" · ")
                    html.text(viewer.role.rawValue)
                }
                html.element("form", [("action", "logout"), ("method", "post")]) { html in
                    html.hidden("csrf", viewer.csrf)
                    html.element("button", [("type", "submit"), ("class", "link")], text: "Sign out")
                }
            }
        }
        html.element("main", [("id", "main")]) { html in
            html.element("h1", text: title)
            if let message { show(message, in: &html) }
            content(&html)
        }
        return finish(&html)
    }

    /// A page without the menu: sign-in, enrollment, errors before signing in.
    static func bare(title: String, message: ConsoleMessage? = nil, content: (inout HTML) -> Void) -> [UInt8] {
        var html = HTML()
        head(&html, title: title)
        html.open("body", [("class", "bare")])
        html.element("main", [("id", "main")]) { html in
            html.element("p", [("class", "brand")], text: "Tessera")
            html.element("h1", text: title)
            if let message { show(message, in: &html) }
            content(&html)
        }
        return finish(&html)
    }

    /// Closes the page's body and document.
    private static func finish(_ html: inout HTML) -> [UInt8] {
        html.close("body")
        html.close("html")
        return html.bytes
    }

    static func show(_ message: ConsoleMessage, in html: inout HTML) {
        switch message.kind {
        case .notice:
            html.element("p", [("role", "status"), ("class", "notice")], text: message.text)
        case .error:
            html.element("p", [("role", "alert"), ("class", "error"), ("data-code", message.code)], text: message.text)
        }
    }

    private static func head(_ html: inout HTML, title: String) {
        html.markup("<!DOCTYPE html>")
        html.open("html", [("lang", "en")])
        html.element("head") { html in
            html.void("meta", [("charset", "utf-8")])
            html.void("meta", [("name", "viewport"), ("content", "width=device-width, initial-scale=1")])
            html.void("meta", [("name", "referrer"), ("content", "no-referrer")])
            html.element("title", text: "\(title) · Tessera console")
            html.void("link", [("rel", "stylesheet"), ("href", "assets/console.css")])
            html.element("script", [("src", "assets/console.js"), ("defer", "")]) { _ in }
        }
    }
}

/// How the console writes times and other values.
enum ConsoleFormat {
    /// `2026-11-26 02:30:00 UTC`, or `—` for none.
    static func time(_ seconds: Int64?) -> String {
        guard let seconds else { return "—" }
        let text = RFC3339.string(seconds)
        // 2026-11-26T02:30:00Z → 2026-11-26 02:30:00 UTC
        return text.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }

    /// A `time` element with the exact instant in `datetime` and `title`; the console's script shows
    /// it relative or in local time, as the operator chose.
    static func time(_ seconds: Int64?, in html: inout HTML) {
        guard let seconds else {
            html.text("—")
            return
        }
        let utc = time(seconds)
        html.element("time", [("datetime", RFC3339.string(seconds)), ("title", utc)], text: utc)
    }
}
