/// How the console shows a session's binding to a device key (RFC 9449): bound or not, the key's
/// thumbprint and where the device says the key lives.
extension ConsoleController {
    /// The session's device key in a table cell: `not bound`, or the key's RFC 7638 thumbprint
    /// shortened (the whole of it in the title) and its declared tier.
    static func binding(_ session: SessionRecord, in html: inout HTML) {
        guard let jkt = session.jkt else {
            html.text("not bound")
            return
        }
        html.element("code", [("class", "jkt"), ("title", jkt)], text: shortThumbprint(jkt))
        html.text(" · " + tierName(session.keyTier))
    }

    /// The first 10 characters of a thumbprint and an ellipsis: enough to tell a profile's keys apart.
    static func shortThumbprint(_ jkt: String) -> String {
        jkt.count > 12 ? String(jkt.prefix(10)) + "…" : jkt
    }

    /// A key tier as an operator reads it; the client declares it, the server does not prove it.
    static func tierName(_ tier: SessionRecord.KeyTier?) -> String {
        switch tier {
        case .secureEnclave: "Secure Enclave"
        case .software: "software key"
        case nil: "tier not declared"
        }
    }
}
