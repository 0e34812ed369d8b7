import TesseraTokens

/// An event about to be written: built once here, so that every backend records the same events.
///
/// `data` never holds a secret, a token or a push token: the builders take only identifiers, kinds
/// and the external ID.
public struct EventDraft: Sendable, Hashable {
    public var id: String
    public var type: EventType
    /// The profile the event is about (the feed's `profile_id` filter, and erasure's scrub).
    public var profileID: String?
    /// A JSON object.
    public var data: String

    init(_ type: EventType, profileID: String?, _ build: (inout JSONWriter) -> Void) {
        self.id = TimeOrderedID.make(prefix: "evt_")
        self.type = type
        self.profileID = profileID
        var writer = JSONWriter()
        writer.objectStart()
        build(&writer)
        writer.objectEnd()
        self.data = String(decoding: writer.bytes, as: UTF8.self)
    }

    public static func profileCreated(profileID: String, kind: ProfileRecord.Kind) -> EventDraft {
        EventDraft(.profileCreated, profileID: profileID) {
            $0.field("profile_id", profileID)
            $0.field("kind", kind.rawValue)
        }
    }

    public static func profilePromoted(profileID: String, externalID: String) -> EventDraft {
        EventDraft(.profilePromoted, profileID: profileID) {
            $0.field("profile_id", profileID)
            $0.field("external_id", externalID)
        }
    }

    /// `from` was folded into `profileID`, whose aliases are now `aliasIDs`.
    public static func profileMerged(
        profileID: String, from: String, externalID: String?, aliasIDs: [String]
    ) -> EventDraft {
        EventDraft(.profileMerged, profileID: profileID) {
            $0.field("profile_id", profileID)
            $0.field("from_profile_id", from)
            $0.field("external_id", externalID)
            $0.strings("alias_ids", aliasIDs)
        }
    }

    public static func profileErased(profileID: String, externalID: String?, aliasIDs: [String]) -> EventDraft {
        EventDraft(.profileErased, profileID: profileID) {
            $0.field("profile_id", profileID)
            $0.field("external_id", externalID)
            $0.strings("alias_ids", aliasIDs)
        }
    }

    /// The profile's `name`, `avatar_url` or `email` changed (their names in `changed`, never the values).
    public static func profileUpdated(profileID: String, changed: [String]) -> EventDraft {
        EventDraft(.profileUpdated, profileID: profileID) {
            $0.field("profile_id", profileID)
            $0.strings("changed", changed)
        }
    }

    public static func profileBlocked(profileID: String) -> EventDraft {
        EventDraft(.profileBlocked, profileID: profileID) { $0.field("profile_id", profileID) }
    }

    public static func profileUnblocked(profileID: String) -> EventDraft {
        EventDraft(.profileUnblocked, profileID: profileID) { $0.field("profile_id", profileID) }
    }

    public static func sessionCreated(_ session: SessionRecord) -> EventDraft {
        EventDraft(.sessionCreated, profileID: session.profileID) {
            $0.field("session_id", session.id)
            $0.field("profile_id", session.profileID)
            $0.field("kind", session.kind.rawValue)
        }
    }

    public static func sessionEnded(sessionID: String, profileID: String, reason: SessionEndReason) -> EventDraft {
        EventDraft(.sessionEnded, profileID: profileID) {
            $0.field("session_id", sessionID)
            $0.field("profile_id", profileID)
            $0.field("reason", reason.rawValue)
        }
    }

    /// A verified profile got a session bound to a device key it never had before.
    public static func profileNewKey(_ session: SessionRecord, jkt: String) -> EventDraft {
        EventDraft(.profileNewKey, profileID: session.profileID) {
            $0.field("profile_id", session.profileID)
            $0.field("session_id", session.id)
            $0.field("jkt", jkt)
            $0.field("installation_id", session.installationID)
        }
    }

    public static func deviceRegistered(deviceID: String, profileID: String, sessionID: String) -> EventDraft {
        device(.deviceRegistered, deviceID: deviceID, profileID: profileID, sessionID: sessionID)
    }

    public static func deviceRemoved(deviceID: String, profileID: String, sessionID: String) -> EventDraft {
        device(.deviceRemoved, deviceID: deviceID, profileID: profileID, sessionID: sessionID)
    }

    private static func device(_ type: EventType, deviceID: String, profileID: String, sessionID: String) -> EventDraft
    {
        EventDraft(type, profileID: profileID) {
            $0.field("device_id", deviceID)
            $0.field("profile_id", profileID)
            $0.field("session_id", sessionID)
        }
    }

    /// The project's settings changed: the names of those that did.
    public static func projectUpdated(projectID: String, changed: [String]) -> EventDraft {
        EventDraft(.projectUpdated, profileID: nil) {
            $0.field("project_id", projectID)
            $0.strings("changed", changed)
        }
    }

    public static func identitySecretCreated(kid: String) -> EventDraft {
        EventDraft(.identitySecretCreated, profileID: nil) { $0.field("kid", kid) }
    }

    public static func identitySecretDeleted(kid: String) -> EventDraft {
        EventDraft(.identitySecretDeleted, profileID: nil) { $0.field("kid", kid) }
    }

    /// An API key of `kind` was replaced; the old one is accepted until `graceUntil` (nil: not at all).
    public static func apiKeyRotated(kind: APIKeyKind, graceUntil: Int64?) -> EventDraft {
        EventDraft(.apiKeyRotated, profileID: nil) {
            $0.field("kind", kind.rawValue)
            $0.time("old_key_expires_at", graceUntil)
        }
    }

    public static func signingKeyRotated(kid: String) -> EventDraft {
        EventDraft(.signingKeyRotated, profileID: nil) { $0.field("kid", kid) }
    }
}

extension JSONWriter {
    /// Writes a member whose value is an array of strings.
    mutating func strings(_ name: StaticString, _ values: [String]) {
        array(name, values) { $0.string($1) }
    }
}
