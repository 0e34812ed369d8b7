import Foundation

/// The profile list (`GET /console/profiles`): its filters (parsed as the admin API parses them,
/// ``ProfileListQuery``), the count, the CSV link, a page of profiles and the pager.
struct ProfilesPage: ConsolePage {
    /// The query as asked for, carried by the pager and the CSV link.
    var query: ConsoleForm
    /// The filters the query parsed to.
    var filter: ProfileQuery
    /// The matching profiles, counted up to ``countCap`` and one more.
    var count: Int
    /// This page of them.
    var profiles: [ProfileRecord]
    /// The cursor of the next page, if any.
    var next: String?
    var viewer: ConsoleViewer

    var title: String { "Profiles" }
    var section: ConsoleSection? { .profiles }

    func render(_ html: inout HTML) {
        html.element("form", [("method", "get"), ("action", "profiles"), ("class", "filters")]) { html in
            ConsoleParts.field(
                &html, id: "search", label: "Email, name or external ID starts with", type: "search",
                value: filter.search, required: false)
            ConsoleParts.select(
                &html, id: "kind", label: "Kind", selected: query.value("kind"),
                options: [("", "Any"), ("anonymous", "Anonymous"), ("identified", "Identified")])
            ConsoleParts.select(
                &html, id: "verified", label: "Verified", selected: query.value("verified"),
                options: [("", "Any"), ("true", "Verified"), ("false", "Not verified")])
            ConsoleParts.select(
                &html, id: "blocked", label: "Blocked", selected: query.value("blocked"),
                options: [("", "Any"), ("true", "Blocked"), ("false", "Not blocked")])
            ConsoleParts.field(&html, id: "email", label: "Email", type: "text", value: filter.email, required: false)
            ConsoleParts.field(
                &html, id: "external_id", label: "External ID", type: "text", value: filter.externalID,
                required: false)
            ConsoleParts.field(
                &html, id: "installation_id", label: "Installation ID", type: "text", value: filter.installationID,
                required: false)
            ConsoleParts.field(
                &html, id: "created_from", label: "Created from (UTC)", type: "date",
                value: query.value("created_from"), required: false)
            ConsoleParts.field(
                &html, id: "created_to", label: "Created to (UTC, included)", type: "date",
                value: query.value("created_to"), required: false)
            ConsoleParts.select(
                &html, id: "order", label: "Order", selected: query.value("order"),
                options: [("newest", "Newest first"), ("oldest", "Oldest first")])
            html.element("button", [("type", "submit")], text: "Filter")
        }
        html.element(
            "p", [("id", "profile-count"), ("role", "status")],
            text: Self.countText(
                count,
                filtered: query.fields.contains {
                    !["cursor", "notice", "order"].contains($0.name) && !$0.value.isEmpty
                }))
        if viewer.may(.admin) {
            let filters = query.fields.filter { $0.name != "cursor" && $0.name != "notice" && !$0.value.isEmpty }
                .map { ($0.name, Optional($0.value)) }
            html.element("p") { html in
                html.link(
                    ConsoleURL("profiles.csv", filters), [("id", "profiles-csv"), ("download", "")],
                    text: filters.isEmpty
                        ? "Download every profile as CSV" : "Download the matching profiles as CSV")
            }
        }
        if profiles.isEmpty {
            html.element("p", text: "No profile matches.")
        } else {
            table(&html)
        }
        if let next {
            var links = query.fields.filter { $0.name != "cursor" && $0.name != "notice" }.map {
                ($0.name, Optional($0.value))
            }
            links.append(("cursor", next))
            html.element("p", [("class", "pager")]) { html in
                html.link(
                    ConsoleURL("profiles", links), [("rel", "next")],
                    text: filter.oldestFirst ? "Newer profiles" : "Older profiles")
            }
        }
    }

    /// The most profiles the list counts; above it, the page says "more than".
    static let countCap = 1_000

    /// "3 profiles match.", "More than 1,000 profiles match.", or, with no filter, "3 profiles.".
    static func countText(_ count: Int, filtered: Bool) -> String {
        let number =
            count > countCap
            ? "More than \(countCap.formatted(.number.locale(Locale(identifier: "en_US"))))"
            : count.formatted(.number.locale(Locale(identifier: "en_US")))
        let noun = count == 1 ? "profile" : "profiles"
        guard filtered else { return "\(number) \(noun)." }
        return "\(number) \(noun) \(count == 1 ? "matches" : "match")."
    }

    /// The profiles as a table, each linked to its page.
    private func table(_ html: inout HTML) {
        ConsoleParts.table(
            &html, caption: "Profiles",
            headers: ["Profile", "Kind", "External ID", "Email", "Verified", "Created"], rows: profiles
        ) { html, profile in
            html.element("td") { html in
                html.link(ConsoleURL("profile", [("id", profile.id)]), text: profile.id)
                if profile.blocked { html.element("span", [("class", "badge danger")], text: "blocked") }
            }
            html.element("td", text: profile.kind.rawValue)
            html.element("td", text: profile.externalID ?? "—")
            html.element("td", text: viewer.shown(email: profile.email) ?? "—")
            html.element("td", text: profile.verified ? "yes" : "no")
            html.element("td") { ConsoleFormat.time(profile.createdAt, in: &$0) }
        }
    }
}
