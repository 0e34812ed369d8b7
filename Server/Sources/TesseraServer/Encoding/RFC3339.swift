/// Formats Unix seconds as RFC 3339 UTC with second precision, `2026-11-20T12:00:00Z`.
enum RFC3339 {
    static func string(_ seconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        append(seconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the 20 bytes of the RFC 3339 form of `seconds` (years 0…9999).
    static func append(_ seconds: Int64, to bytes: inout [UInt8]) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let zero = UInt8(ascii: "0")
        func digit(_ value: Int64) -> UInt8 { zero + UInt8(truncatingIfNeeded: value % 10) }
        func two(_ value: Int64) {
            bytes.append(digit(value / 10))
            bytes.append(digit(value))
        }
        bytes.append(digit(year / 1000))
        bytes.append(digit(year / 100))
        bytes.append(digit(year / 10))
        bytes.append(digit(year))
        bytes.append(UInt8(ascii: "-"))
        two(month)
        bytes.append(UInt8(ascii: "-"))
        two(day)
        bytes.append(UInt8(ascii: "T"))
        two(secondOfDay / 3600)
        bytes.append(UInt8(ascii: ":"))
        two(secondOfDay % 3600 / 60)
        bytes.append(UInt8(ascii: ":"))
        two(secondOfDay % 60)
        bytes.append(UInt8(ascii: "Z"))
    }
}
