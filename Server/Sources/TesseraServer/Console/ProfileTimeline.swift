import Foundation

/// A profile's events told in words, newest first, for the timeline of its console page: "Signed in
/// on installation 9274ab1c… (verified)", "Blocked by ops@example.com: chargeback".
///
/// Pure: it reads only the events and the operators' emails it is given, so the page (and a test)
/// decides what it shows. The sentence never holds a credential or a push token (events hold none).
enum ProfileTimeline {
    /// One line of the timeline: when, and what happened in words.
    struct Entry: Sendable, Equatable {
        var at: Int64
        var text: String
    }

    /// The events as entries, in the order given.
    static func entries(_ events: [EventRecord], operatorEmails: [String: String]) -> [Entry] {
        events.map { Entry(at: $0.createdAt, text: sentence($0, operatorEmails: operatorEmails)) }
    }

    /// What `event` did, in words.
    static func sentence(_ event: EventRecord, operatorEmails: [String: String]) -> String {
        let data = (try? JSONSerialization.jsonObject(with: Data(event.data.utf8))) as? [String: Any] ?? [:]
        func string(_ name: String) -> String? { data[name] as? String }
        let by = actor(event.actor, operatorEmails: operatorEmails)
        let because = event.reason.map { ": \($0)" } ?? ""
        switch event.type {
        case "profile.created":
            return string("kind") == "identified" ? "Created, signed in" : "Created as an anonymous profile"
        case "session.created":
            let place = string("installation_id").map { " on installation \(short($0))" } ?? ""
            switch string("kind") {
            case "anonymous": return "Started an anonymous session\(place)"
            case "verified": return "Signed in\(place) (verified)"
            case "unverified": return "Signed in\(place) (unverified: the app's word, not a signed identity)"
            default: return "Session \(string("session_id") ?? "")\(place) started"
            }
        case "session.ended":
            let session = string("session_id").map { "Session \(short($0))" } ?? "A session"
            return "\(session) ended: " + endReason(string("reason"), by: by)
        case "profile.promoted":
            return "Signed in as \(string("external_id") ?? "a user"): this anonymous profile became theirs"
        case "profile.merged":
            let from = string("from_profile_id").map(short) ?? "another profile"
            return "Profile \(from) was merged into this one at sign-in as \(string("external_id") ?? "this user")"
        case "profile.updated":
            let changed = (data["changed"] as? [String])?.joined(separator: ", ") ?? "its details"
            return "Updated: \(changed)"
        case "profile.blocked": return "Blocked by \(by)\(because)"
        case "profile.unblocked": return "Unblocked by \(by)\(because)"
        case "profile.erased": return "Erased by \(by)\(because)"
        case "device.registered":
            return "Push device \(string("device_id").map(short) ?? "") registered"
        case "device.removed":
            return "Push device \(string("device_id").map(short) ?? "") removed by \(by)"
        case "profile.new_key":
            let place = string("installation_id").map { " on installation \(short($0))" } ?? ""
            return "A new device key\(place)"
        default:
            return "\(event.type) by \(by)"
        }
    }

    /// Who acted: an operator by email, the app's backend, the app, or Tessera itself.
    static func actor(_ actor: EventActor, operatorEmails: [String: String]) -> String {
        switch actor.kind {
        case .operator: return actor.id.flatMap { operatorEmails[$0] } ?? "an operator"
        case .secretKey: return "the app's backend (secret key)"
        case .sdk: return "the app"
        case .system: return "Tessera"
        }
    }

    /// Why a session ended, in words (the contract's `reason`).
    static func endReason(_ reason: String?, by: String) -> String {
        switch reason {
        case "signed_out": return "signed out"
        case "revoked": return "revoked by \(by)"
        case "expired": return "expired"
        case "replaced": return "replaced by a newer session of the same installation"
        case "erased": return "the profile was erased"
        case "blocked": return "the profile was blocked"
        case "admin": return "ended by \(by)"
        case "evicted": return "the oldest of too many sessions"
        case let other?: return other
        case nil: return "ended"
        }
    }

    /// An identifier shortened to tell two apart on one page (the events table below has them
    /// whole): a prefixed ID keeps its prefix and its last eight characters (its first ones are the
    /// time it was made, shared by IDs made together); an installation UUID its first eight.
    static func short(_ identifier: String) -> String {
        guard identifier.count > 14 else { return identifier }
        if let underscore = identifier.firstIndex(of: "_") {
            return String(identifier[...underscore]) + "…" + String(identifier.suffix(8))
        }
        return String(identifier.prefix(8)) + "…"
    }
}
