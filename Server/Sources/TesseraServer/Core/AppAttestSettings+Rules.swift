import TesseraAttest

extension AppAttestSettings {
    /// The most app IDs a project may accept.
    static let maxAppIDs = 20

    /// Settings as stored: unknown mode or environment values read as the defaults (`off`, `production`).
    init(mode: String, appIDs: String, environment: String, allowUnsupported: Bool) {
        self.init()
        self.mode = Mode(rawValue: mode) ?? .off
        self.appIDs = appIDs.split(separator: " ").map(String.init)
        self.environment = AppAttestEnvironment(rawValue: environment) ?? .production
        self.allowUnsupported = allowUnsupported
    }

    /// The app IDs as stored: space-separated (an app ID holds no space).
    var storedAppIDs: String { appIDs.joined(separator: " ") }

    /// Whether `value` is an app ID: a ten-character Team ID of upper-case letters and digits, a dot,
    /// and a bundle ID of letters, digits, hyphens and dots (at most 255 bytes in all).
    static func isAppID(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count >= 12, bytes.count <= 255, bytes[10] == UInt8(ascii: ".") else { return false }
        let teamID = bytes[..<10].allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
        let bundleID = bytes[11...]
        return teamID && bundleID.first != UInt8(ascii: ".") && bundleID.last != UInt8(ascii: ".")
            && bundleID.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            }
    }

    /// The rules of the setting, with the messages the admin API answers.
    ///
    /// A mode without app IDs is allowed (the contract's schema cannot tie one member to another):
    /// every attestation then fails with reason `app_id`, which `monitor` shows before anything is refused.
    func check() throws(CoreError) {
        guard appIDs.count <= Self.maxAppIDs else {
            throw CoreError.invalidRequest("app_attest.app_ids holds at most \(Self.maxAppIDs) app IDs.")
        }
        guard appIDs.allSatisfy(Self.isAppID) else {
            throw CoreError.invalidRequest(
                "app_attest.app_ids must hold app IDs of the form TEAMID.bundle.id (a 10-character Team ID).")
        }
        guard Set(appIDs).count == appIDs.count else {
            throw CoreError.invalidRequest("app_attest.app_ids holds an app ID twice.")
        }
    }
}
