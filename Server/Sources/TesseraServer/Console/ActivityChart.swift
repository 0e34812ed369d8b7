/// The overview's active-user charts: server-rendered SVG (no script), each an image with a title
/// and a description, followed by the same figures as a table.
enum ActivityChart {
    /// The date of a day (since 1970-01-01, UTC), `2026-11-29`.
    static func date(_ day: Int64) -> String { String(RFC3339.string(day * 86_400).prefix(10)) }

    private static let width = 720
    private static let height = 180
    private static let top = 18
    private static let bottom = 22

    /// Daily active profiles as bars, each split into identified and anonymous-only profiles.
    static func dailyActive(_ days: [ActivityDay], in html: inout HTML) {
        let peak = max(1, days.map(\.counts.profiles).max() ?? 0)
        let total = days.reduce(0) { $0 + $1.counts.profiles }
        let last = days.last?.counts ?? ActivityCounts()
        let description =
            days.isEmpty
            ? "No days."
            : "From \(date(days[0].day)) to \(date(days[days.count - 1].day)): at most \(peak.formatted()) profiles a day; "
                + "on the last day \(last.profiles.formatted()) (\(last.identifiedProfiles.formatted()) identified, "
                + "\(last.anonymousProfiles.formatted()) anonymous); \(total.formatted()) profile-days in all."
        chart(
            id: "dau", title: "Daily active profiles, last \(days.count) days", description: description, peak: peak,
            label: peak.formatted(), days: days, in: &html
        ) { day in
            let identified = min(day.counts.identifiedProfiles, day.counts.profiles)
            return [(identified, "identified"), (day.counts.profiles - identified, "anonymous")]
        }
        legend([("identified", "Identified"), ("anonymous", "Anonymous only")], in: &html)
    }

    /// The daily anonymous → identified conversion: identifies that promoted or merged an anonymous
    /// profile, per hundred anonymous profiles active that day.
    static func conversion(_ days: [ActivityDay], in html: inout HTML) {
        let rates = days.map { rate($0) ?? 0 }
        let peak = max(0.01, rates.max() ?? 0)
        let converted = days.reduce(Int64(0)) { $0 + $1.conversions }
        let description =
            "\(converted.formatted()) anonymous profiles identified in \(days.count) days; the highest daily rate "
            + "\(percent(peak)) of that day's anonymous active profiles."
        let scale = 10_000.0
        chart(
            id: "conversion", title: "Daily anonymous → identified conversion", description: description,
            peak: Int(peak * scale), label: percent(peak), days: days, in: &html
        ) { day in [(Int((rate(day) ?? 0) * scale), "conversion")] }
    }

    /// Conversions per anonymous active profile that day; nil with no anonymous profile active.
    static func rate(_ day: ActivityDay) -> Double? {
        guard day.counts.anonymousProfiles > 0 else { return day.conversions > 0 ? 1 : nil }
        return min(1, Double(day.conversions) / Double(day.counts.anonymousProfiles))
    }

    static func percent(_ value: Double) -> String {
        let tenths = Int((value * 1000).rounded())
        return "\(tenths / 10).\(tenths % 10) %"
    }

    /// Every day as a table row: date, profiles (identified, anonymous), installations, conversions.
    static func table(_ days: [ActivityDay], in html: inout HTML) {
        html.element("details") { html in
            html.element("summary", text: "The daily figures as a table")
            ConsoleParts.table(
                &html, caption: "Active profiles and installations per day (UTC), newest first",
                headers: ["Day", "Profiles", "Identified", "Anonymous", "Installations", "Conversions", "Rate"],
                rows: days.reversed()
            ) { html, day in
                html.element("td", text: date(day.day))
                html.element("td", text: day.counts.profiles.formatted())
                html.element("td", text: day.counts.identifiedProfiles.formatted())
                html.element("td", text: day.counts.anonymousProfiles.formatted())
                html.element("td", text: day.counts.installations.formatted())
                html.element("td", text: day.conversions.formatted())
                html.element("td", text: rate(day).map(percent) ?? "—")
            }
        }
    }

    /// A bar chart: one stacked bar per day, its segments from the bottom up.
    private static func chart(
        id: String, title: String, description: String, peak: Int, label: String, days: [ActivityDay],
        in html: inout HTML, segments: (ActivityDay) -> [(value: Int, kind: String)]
    ) {
        let plot = height - top - bottom
        let step = Double(width) / Double(max(1, days.count))
        let barWidth = max(1, step * 0.8)
        html.element(
            "svg",
            [
                ("class", "chart"), ("viewBox", "0 0 \(width) \(height)"), ("role", "img"),
                ("aria-labelledby", "\(id)-title \(id)-desc"),
            ]
        ) { html in
            html.element("title", [("id", "\(id)-title")], text: title)
            html.element("desc", [("id", "\(id)-desc")], text: description)
            html.element("text", [("class", "axis"), ("x", "2"), ("y", "12")], text: label)
            html.void("line", [("class", "grid"), ("x1", "0"), ("x2", "\(width)"), ("y1", "\(top)"), ("y2", "\(top)")])
            for (index, day) in days.enumerated() {
                var base = Double(top + plot)
                for segment in segments(day) where segment.value > 0 {
                    let size = Double(plot) * Double(segment.value) / Double(peak)
                    base -= size
                    html.void(
                        "rect",
                        [
                            ("class", segment.kind), ("x", format(Double(index) * step + (step - barWidth) / 2)),
                            ("y", format(base)), ("width", format(barWidth)), ("height", format(size)),
                        ])
                }
            }
            let baseline = "\(top + plot)"
            html.void("line", [("class", "base"), ("x1", "0"), ("x2", "\(width)"), ("y1", baseline), ("y2", baseline)])
            if let first = days.first, let last = days.last {
                html.element("text", [("class", "axis"), ("x", "2"), ("y", "\(height - 6)")], text: date(first.day))
                html.element(
                    "text", [("class", "axis"), ("x", "\(width - 2)"), ("y", "\(height - 6)"), ("text-anchor", "end")],
                    text: date(last.day))
            }
        }
    }

    private static func legend(_ entries: [(kind: String, text: String)], in html: inout HTML) {
        html.element("ul", [("class", "legend")]) { html in
            for entry in entries {
                html.element("li") { html in
                    html.element("span", [("class", "swatch \(entry.kind)"), ("aria-hidden", "true")], text: "")
                    html.text(entry.text)
                }
            }
        }
    }

    private static func format(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        return "\(hundredths / 100).\(String(hundredths % 100 + 100).dropFirst())"
    }
}
