import Crypto
import Foundation
import TesseraTokens

/// Time-based one-time passwords (RFC 6238) as authenticator apps compute them: HMAC-SHA1 of the
/// 30-second time step, 6 digits.
///
/// A code is accepted one step before and after the current one (clock drift of the phone), and
/// only for a step later than the last one accepted, so a code seen over a shoulder cannot be
/// used again.
///
/// ```swift
/// let totp = TOTP(secret: TOTP.generateSecret())
/// let uri = totp.uri(issuer: "Tessera", account: "ops@example.com")  // shown as a QR code
/// let step = totp.verify("287082", at: now, after: record.totpLastStep)  // nil: refused
/// ```
public struct TOTP: Sendable, Hashable {
    /// Seconds per time step.
    public static let period: Int64 = 30
    /// Digits of a code.
    public static let digits = 6
    /// Steps accepted on either side of the current one.
    public static let window: Int64 = 1
    /// Bytes of a new secret: 160 bits, the HMAC-SHA1 key size RFC 4226 recommends.
    public static let secretByteCount = 20

    public let secret: [UInt8]

    public init(secret: [UInt8]) {
        self.secret = secret
    }

    /// A new random secret.
    public static func generateSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<secretByteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The time step that contains `time` (Unix seconds).
    public static func step(at time: Int64) -> Int64 {
        time >= 0 ? time / period : (time - period + 1) / period
    }

    /// The code of a time step, with `digits` digits (RFC 4226 dynamic truncation).
    public func code(step: Int64, digits: Int = TOTP.digits) -> String {
        let counter = withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The code at `time` (Unix seconds).
    public func code(at time: Int64, digits: Int = TOTP.digits) -> String {
        code(step: Self.step(at: time), digits: digits)
    }

    /// The step whose code `candidate` is, within ``window`` steps of `time` and later than
    /// `lastStep`; nil when it matches none. Spaces in the code are ignored; codes are compared in
    /// constant time.
    public func verify(_ candidate: String, at time: Int64, after lastStep: Int64?) -> Int64? {
        let code = candidate.filter { !$0.isWhitespace }
        guard code.count == Self.digits, code.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let current = Self.step(at: time)
        var matched: Int64?
        // Every step of the window is computed and compared, matched or not.
        for step in (current - Self.window)...(current + Self.window) {
            let equal = OpaqueToken.constantTimeEquals(Array(self.code(step: step).utf8), Array(code.utf8))
            if equal, step > (lastStep ?? .min), matched == nil { matched = step }
        }
        return matched
    }

    /// The `otpauth://` URI that authenticator apps read (usually from a QR code).
    public func uri(issuer: String, account: String) -> String {
        let label = Self.escape(issuer) + ":" + Self.escape(account)
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=\(Self.escape(issuer))"
            + "&algorithm=SHA1&digits=\(Self.digits)&period=\(Self.period)"
    }

    /// Percent-encodes everything but unreserved characters (RFC 3986).
    private static func escape(_ text: String) -> String {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
