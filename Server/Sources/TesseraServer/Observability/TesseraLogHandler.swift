public import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The log handler `tessera serve` installs: one logfmt line per event on standard error.
///
/// ```
/// 2026-11-21T03:40:12Z level=error label=tessera msg="request failed" request_id=hb-4f… route=/v1/me status=503
/// ```
///
/// Hummingbird's request ID (metadata key ``requestIDKey``) is printed as `request_id`. Setting
/// metadata is a plain dictionary write: swift-log's `StreamLogHandler` re-renders all of its metadata
/// on every change, which, when every request still set its request ID, cost more than the session
/// lookup of a heartbeat even when nothing was logged.
public struct TesseraLogHandler: LogHandler {
    /// The metadata key under which Hummingbird puts each request's ID (and the middleware a
    /// client-supplied one).
    static let requestIDKey = "hb.request.id"

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    private let label: String

    /// A handler for the logger named `label`.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = RFC3339.string(Int64(time(nil)))
        line +=
            " level=\(event.level.rawValue) label=\(Self.quoted(label)) msg=\(Self.quoted(event.message.description))"
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let extra = event.metadata {
            merged.merge(extra) { _, new in new }
        }
        if let requestID = merged.removeValue(forKey: Self.requestIDKey), merged["request_id"] == nil {
            merged["request_id"] = requestID
        }
        for key in merged.keys.sorted() {
            line += " \(key)=\(Self.quoted(merged[key]!.description))"
        }
        line += "\n"
        // One write(2) per line, so lines of concurrent requests never interleave.
        var bytes = line
        bytes.withUTF8 { utf8 in _ = write(STDERR_FILENO, utf8.baseAddress, utf8.count) }
    }

    /// The value as it is when it has no space, quote, `=` or control character; otherwise quoted and escaped.
    static func quoted(_ value: String) -> String {
        let plain =
            !value.isEmpty
            && value.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "=") }
        if plain { return value }
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
