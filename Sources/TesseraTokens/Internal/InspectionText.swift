import Foundation

/// The short phrases an inspection's details are made of: dates, durations, JSON values.
enum InspectionText {
    /// `2026-11-26T02:30:00Z`, or the number itself when it is outside years 1–9999 or fractional.
    static func date(_ seconds: Double) -> String {
        guard (-62_135_596_800...253_402_300_799).contains(seconds) else { return number(seconds) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let text = formatter.string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
        return seconds == seconds.rounded(.down) ? text : "\(text) (\(number(seconds)))"
    }

    /// `4 minutes ago`, `in 5 minutes`, `now`.
    static func relative(_ seconds: Double, to now: Double) -> String {
        let distance = abs(seconds - now)
        guard distance >= 1 else { return "now" }
        let amount: String
        switch distance {
        case ..<120: amount = "\(Int(distance)) seconds"
        case ..<7200: amount = "\(Int(distance / 60)) minutes"
        case ..<172_800: amount = "\(Int(distance / 3600)) hours"
        case ..<3.15e12: amount = "\(Int(distance / 86400)) days"
        default: amount = "more than 100,000 years"
        }
        return seconds > now ? "in \(amount)" : "\(amount) ago"
    }

    /// A number without a useless `.0`.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// A date claim: `exp is 2026-11-26T02:30:00Z, 4 minutes ago`.
    static func claim(_ name: String, _ seconds: Double, now: Double) -> String {
        "\(name) is \(date(seconds)), \(relative(seconds, to: now))"
    }

    /// A claim string for a detail, quoted and cut to 80 characters.
    static func quoted(_ text: String) -> String {
        let scalars = text.unicodeScalars
        let cut = scalars.count > 80 ? String(String.UnicodeScalarView(scalars.prefix(80))) + "…" : text
        return "\"" + cut.unicodeScalars.map { ClaimRules.isControl($0) ? "\u{FFFD}" : String($0) }.joined() + "\""
    }
}
