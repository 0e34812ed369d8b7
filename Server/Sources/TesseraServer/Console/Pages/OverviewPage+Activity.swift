/// The overview's sections over time: active users, identify outcomes per day, App Attest.
extension OverviewPage {
    /// Active profiles and installations (1, 7 and 30 days), the daily chart and the conversion.
    static func activity(_ summary: (value: ActivitySummary, at: Int64)?, in html: inout HTML) {
        html.element("section", [("aria-labelledby", "active-title")]) { html in
            html.element("h2", [("id", "active-title")], text: "Active users")
            guard let summary else {
                html.element("p", [("role", "status")], text: "Counting… reload the page in a moment.")
                return
            }
            let windows = ActivitySummary.windowDays.map { ($0, summary.value.windows[$0] ?? ActivityCounts()) }
            ConsoleParts.table(
                &html, caption: "Distinct profiles and installations seen (heartbeat, start or identify)",
                headers: [
                    "Window", "Profiles", "Identified", "Anonymous", "Installations", "Identified inst.",
                    "Anonymous inst.",
                ],
                rows: windows
            ) { html, row in
                let (days, counts) = row
                html.element(
                    "th", [("scope", "row")], text: days == 1 ? "Today (UTC)" : "Last \(days) days")
                for value in [
                    counts.profiles, counts.identifiedProfiles, counts.anonymousProfiles, counts.installations,
                    counts.identifiedInstallations, counts.anonymousInstallations,
                ] {
                    html.element("td", text: value.formatted())
                }
            }
            ActivityChart.dailyActive(summary.value.days, in: &html)
            ActivityChart.conversion(summary.value.days, in: &html)
            ActivityChart.table(summary.value.days, in: &html)
            html.element("p", [("class", "small")]) { html in
                html.text("Counted at ")
                ConsoleFormat.time(summary.at, in: &html)
                html.text(
                    "; recounted in the background every \(ActivityRecorder.summarySeconds / 60) minutes. A profile counts as identified on a day it was active identified, and may count as both on the day it was identified; conversions are identifies that promoted or merged an anonymous profile."
                )
            }
        }
    }

    /// Identify outcomes and refusals, today and over the last 30 days, from the store's tallies (every
    /// node's).
    static func identify(_ summary: ActivitySummary?, in html: inout HTML) {
        html.element("section", [("aria-labelledby", "identify-title")]) { html in
            html.element("h2", [("id", "identify-title")], text: "Identify outcomes, last 30 days")
            let days = summary?.days.suffix(30) ?? []
            var totals: [String: (today: Int64, month: Int64)] = [:]
            for (index, day) in days.enumerated() {
                for (name, count) in day.tallies where name.hasPrefix("identify.") {
                    let outcome = String(name.dropFirst("identify.".count))
                    totals[outcome, default: (0, 0)].month += count
                    if index == days.count - 1 { totals[outcome, default: (0, 0)].today += count }
                }
            }
            guard !totals.isEmpty else {
                html.element("p", text: summary == nil ? "Counting… reload the page in a moment." : "No identify yet.")
                return
            }
            ConsoleParts.table(
                &html, caption: nil, headers: ["Outcome", "Today (UTC)", "30 days"],
                rows: totals.sorted { $0.key < $1.key }
            ) { html, row in
                html.element("td", text: row.key)
                html.element("td", text: row.value.today.formatted())
                html.element("td", text: row.value.month.formatted())
            }
        }
    }

    /// App Attest: the mode, the installations by their latest verdict, and the share of starts and
    /// identifies `enforce` would have refused over the last 30 days.
    static func appAttest(
        mode: AppAttestSettings.Mode, counts: AppAttestCounts?, summary: ActivitySummary?, in html: inout HTML
    ) {
        html.element("section", [("aria-labelledby", "attest-title")]) { html in
            html.element("h2", [("id", "attest-title")], text: "App Attest")
            html.element("p") { html in
                html.text("Mode: ")
                html.element("code", text: mode.rawValue)
                html.text(". ")
                html.link(ConsoleURL("settings"), text: "Change it in the settings")
            }
            if let counts, !counts.verdicts.isEmpty {
                let installations = counts.verdicts.values.reduce(0, +)
                html.element("p") { html in
                    html.text(
                        "Enforce would refuse the latest start or identify of \(counts.enforceWouldRefuse.formatted()) of \(installations.formatted()) installations checked ("
                            + ActivityChart.percent(Double(counts.enforceWouldRefuse) / Double(max(1, installations)))
                            + ").")
                }
                ConsoleParts.table(
                    &html, caption: "Installations by their latest verdict", headers: ["Verdict", "Installations"],
                    rows: counts.verdicts.sorted { $0.key < $1.key }
                ) { html, row in
                    html.element("td", text: row.key)
                    html.element("td", text: row.value.formatted())
                }
            }
            let days = summary?.days.suffix(30) ?? []
            let gates = [
                ("new_installation", "New installations"), ("restore", "Restores"), ("identify", "Identifies"),
            ]
            let rows = gates.map { gate, name in
                (
                    name: name,
                    checks: days.reduce(Int64(0)) { $0 + $1.tallies["app_attest.checks." + gate, default: 0] },
                    refused: days.reduce(Int64(0)) { $0 + $1.tallies["app_attest.would_refuse." + gate, default: 0] }
                )
            }
            guard rows.contains(where: { $0.checks > 0 }) else {
                html.element("p", text: "No start or identify was checked in the last 30 days.")
                return
            }
            let checks = rows.reduce(Int64(0)) { $0 + $1.checks }
            let refused = rows.reduce(Int64(0)) { $0 + $1.refused }
            html.element("p", [("class", "share")]) { html in
                html.element(
                    "strong",
                    text: ActivityChart.percent(Double(refused) / Double(max(1, checks)))
                        + " of starts and identifies")
                html.text(
                    " checked in the last 30 days would have been refused by enforce (\(refused.formatted()) of \(checks.formatted()))."
                )
            }
            ConsoleParts.table(
                &html, caption: "Checks in the last 30 days",
                headers: ["Request", "Checked", "Enforce would refuse", "Share"],
                rows: rows
            ) { html, row in
                html.element("td", text: row.name)
                html.element("td", text: row.checks.formatted())
                html.element("td", text: row.refused.formatted())
                html.element(
                    "td", text: row.checks == 0 ? "—" : ActivityChart.percent(Double(row.refused) / Double(row.checks)))
            }
        }
    }
}
