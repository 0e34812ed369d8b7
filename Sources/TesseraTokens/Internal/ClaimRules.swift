/// Validation of the profile claims and the subject, shared by the verifier and the minter's callers.
enum ClaimRules {
    static let maximumSubjectLength = 255
    static let maximumNameLength = 200
    static let maximumAvatarURLLength = 2048
    static let maximumEmailLength = 254

    /// Unicode general category Cc.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    static func isValidSubject(_ subject: String) -> Bool {
        var count = 0
        for scalar in subject.unicodeScalars {
            if isControl(scalar) { return false }
            count += 1
        }
        return (1...maximumSubjectLength).contains(count)
    }

    static func isValidName(_ name: String) -> Bool {
        var count = 0
        var sawVisible = false
        for scalar in name.unicodeScalars {
            if isControl(scalar) { return false }
            if !scalar.properties.isWhitespace { sawVisible = true }
            count += 1
        }
        return sawVisible && count <= maximumNameLength
    }

    /// An absolute `https` URL with a host, printable ASCII only, no user information.
    static func isValidAvatarURL(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        guard bytes.count <= maximumAvatarURLLength, bytes.count > 8 else { return false }
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return false }
        let scheme = bytes[0..<8].map { $0 | 0x20 == $0 ? $0 : $0 | 0x20 }  // ASCII lower-case letters
        guard scheme.elementsEqual("https://".utf8) else { return false }
        let rest = bytes[8...]
        let authorityEnd =
            rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
            ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { return false }
        var host = authority[...]
        if host.first == UInt8(ascii: "[") {
            guard let close = host.firstIndex(of: UInt8(ascii: "]")), close > host.startIndex + 1 else { return false }
            let after = host[(close + 1)...]
            return after.isEmpty || isPort(after)
        }
        if let colon = host.firstIndex(of: UInt8(ascii: ":")) {
            guard isPort(host[colon...]) else { return false }
            host = host[host.startIndex..<colon]
        }
        guard !host.isEmpty else { return false }
        return host.allSatisfy { byte in
            isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "%")
        }
    }

    private static func isPort(_ text: ArraySlice<UInt8>) -> Bool {
        guard text.first == UInt8(ascii: ":") else { return false }
        let digits = text.dropFirst()
        guard (1...5).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
        let port = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return (1...65535).contains(port)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static let atextSymbols: [UInt8] = Array("!#$%&'*+/=?^_`{|}~-".utf8)

    /// An addr-spec of RFC 5322 with a dot-atom local part and a DNS host name, ASCII only.
    static func isValidEmail(_ email: String) -> Bool {
        var email = email
        return email.withUTF8 { bytes in
            guard bytes.count <= maximumEmailLength, let at = bytes.lastIndex(of: UInt8(ascii: "@")) else {
                return false
            }
            let localCount = at
            let domainCount = bytes.count - at - 1
            guard (1...64).contains(localCount), (1...253).contains(domainCount) else { return false }
            // Local part: dot-separated non-empty atoms of atext.
            var previousWasDot = true
            for index in 0..<at {
                let byte = bytes[index]
                if byte == UInt8(ascii: ".") {
                    if previousWasDot { return false }
                    previousWasDot = true
                } else {
                    guard isAlphanumeric(byte) || atextSymbols.contains(byte) else { return false }
                    previousWasDot = false
                }
            }
            if previousWasDot { return false }
            // Domain: at least two labels of 1–63 letters, digits and inner hyphens; the last not all digits.
            var labels = 0
            var labelLength = 0
            var labelAllDigits = true
            var previous: UInt8 = UInt8(ascii: ".")
            for index in (at + 1)..<bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: ".") {
                    guard labelLength > 0, previous != UInt8(ascii: "-") else { return false }
                    labels += 1
                    labelLength = 0
                    labelAllDigits = true
                } else {
                    guard isAlphanumeric(byte) || byte == UInt8(ascii: "-") else { return false }
                    if byte == UInt8(ascii: "-") && labelLength == 0 { return false }
                    labelLength += 1
                    guard labelLength <= 63 else { return false }
                    if !(0x30...0x39).contains(byte) { labelAllDigits = false }
                }
                previous = byte
            }
            guard labelLength > 0, previous != UInt8(ascii: "-") else { return false }
            labels += 1
            return labels >= 2 && !labelAllDigits
        }
    }
}
