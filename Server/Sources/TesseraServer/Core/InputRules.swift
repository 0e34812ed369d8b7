/// Syntax rules for client input.
enum InputRules {
    /// A lower-case UUID with dashes: `8-4-4-4-12` hex digits.
    static func isInstallationID(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                else { return false }
            }
        }
        return true
    }

    /// An external user ID: 1–255 Unicode scalars (hence at most 1020 UTF-8 bytes), no control characters.
    ///
    /// Counted in scalars, never in `Character`s: one grapheme cluster can hold any number of combining
    /// marks, so a "one-character" ID could be kilobytes long. The same rule as the `sub` of identity
    /// tokens (TesseraTokens), so an ID accepted in one form is accepted in the other.
    static func isExternalID(_ value: String) -> Bool {
        var count = 0
        for scalar in value.unicodeScalars {
            if scalar.properties.generalCategory == .control { return false }
            count += 1
            if count > 255 { return false }
        }
        return count >= 1
    }

    /// An expected identity-token issuer: 1–2048 UTF-8 bytes, no control characters (PostgreSQL's
    /// text cannot even hold a NUL).
    static func isIssuer(_ value: String) -> Bool {
        (1...2048).contains(value.utf8.count) && hasNoControlCharacters(value)
    }

    /// Whether no scalar of `value` is a control character (C0, DEL, C1).
    private static func hasNoControlCharacters(_ value: String) -> Bool {
        !value.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// A push token: 1–4096 printable ASCII characters.
    static func isPushToken(_ value: String) -> Bool {
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= 4096 else { return false }
        return bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// A resource ID with one of the server's prefixes, in the characters the server generates.
    static func isIdentifier(_ value: String, prefix: String) -> Bool {
        guard value.hasPrefix(prefix), value.utf8.count <= 128 else { return false }
        return value.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F
                || $0 == 0x2D
        }
    }

    /// A project slug: 1–64 of `a-z`, `0-9` and `-`, not starting with `-`.
    static func isSlug(_ value: String) -> Bool {
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= 64, bytes.first != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D }
    }

    /// An HTTP field name (RFC 9110 `token`): one or more of `!#$%&'*+-.^_`|~`, digits and letters.
    static func isHeaderName(_ value: String) -> Bool {
        !value.isEmpty
            && value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
                    UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
                    UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"),
                    UInt8(ascii: "|"), UInt8(ascii: "~"):
                    return true
                default:
                    return false
                }
            }
    }
}
