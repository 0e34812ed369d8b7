/// HTML written with escaping by default: the console's pages are built with it instead of
/// templates, so a value can only reach a page as text.
///
/// Tag and attribute names are `StaticString`s, written by this code and never by data; every
/// `String` (text and attribute values) is escaped. The one way to write markup as is takes a
/// `StaticString` too, so nothing read from a request or the database can become markup.
///
/// ```swift
/// var html = HTML()
/// html.element("p", [("class", "notice")]) { $0.text(name) }
/// ```
struct HTML: Sendable {
    typealias Attributes = [(name: StaticString, value: String?)]

    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(16_384) }

    /// Text, escaped for an element's content or a quoted attribute value.
    mutating func text(_ value: some StringProtocol) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): bytes.append(contentsOf: "&#39;".utf8)
            default: bytes.append(byte)
            }
        }
    }

    /// Markup written by this code, as is.
    mutating func markup(_ value: StaticString) {
        value.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// An opening tag; an attribute whose value is nil is left out, an empty value is written bare
    /// (`required`, `checked`).
    mutating func open(_ tag: StaticString, _ attributes: Attributes = []) {
        bytes.append(UInt8(ascii: "<"))
        markup(tag)
        for attribute in attributes {
            guard let value = attribute.value else { continue }
            bytes.append(UInt8(ascii: " "))
            markup(attribute.name)
            if !value.isEmpty {
                bytes.append(contentsOf: "=\"".utf8)
                text(value)
                bytes.append(UInt8(ascii: "\""))
            }
        }
        bytes.append(UInt8(ascii: ">"))
    }

    /// A closing tag.
    mutating func close(_ tag: StaticString) {
        bytes.append(contentsOf: "</".utf8)
        markup(tag)
        bytes.append(UInt8(ascii: ">"))
    }

    /// An element with content.
    mutating func element(_ tag: StaticString, _ attributes: Attributes = [], _ content: (inout HTML) -> Void) {
        open(tag, attributes)
        content(&self)
        close(tag)
    }

    /// An element whose content is one text.
    mutating func element(_ tag: StaticString, _ attributes: Attributes = [], text value: some StringProtocol) {
        open(tag, attributes)
        text(value)
        close(tag)
    }

    /// A void element (`input`, `meta`, `link`, `br`).
    mutating func void(_ tag: StaticString, _ attributes: Attributes = []) {
        open(tag, attributes)
    }

    /// A link to a console page.
    mutating func link(_ url: ConsoleURL, _ attributes: Attributes = [], text value: some StringProtocol) {
        element("a", [("href", url.relative)] + attributes, text: value)
    }

    /// A hidden form field.
    mutating func hidden(_ name: StaticString, _ value: String) {
        void("input", [("type", "hidden"), ("name", name.description), ("value", value)])
    }
}

/// A relative link to a console page: every page is one level under the console's root, so
/// `profile?id=usr_1` works at `/console/` and behind a reverse proxy at `/auth/console/` alike.
struct ConsoleURL: Sendable, Hashable {
    var page: String
    var query: [(String, String)]

    init(_ page: String, _ query: [(String, String?)] = []) {
        self.page = page
        self.query = query.compactMap { name, value in value.map { (name, $0) } }
    }

    static func == (lhs: ConsoleURL, rhs: ConsoleURL) -> Bool { lhs.relative == rhs.relative }
    func hash(into hasher: inout Hasher) { hasher.combine(relative) }

    /// The link, its query values percent-encoded (an empty page is the overview: `./`).
    var relative: String {
        var text = page.isEmpty ? "./" : page
        for (index, (name, value)) in query.enumerated() {
            text += index == 0 ? "?" : "&"
            text += Self.encode(name) + "=" + Self.encode(value)
        }
        return text
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters.
    static func encode(_ value: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
