import TesseraTokens

/// The identity-token inspector (`GET /console/inspector`): the form, and after a `POST` every check
/// identify makes on the pasted token, with its verdict. The token is not written back into the page.
struct InspectorPage: ConsolePage {
    /// The checks of the pasted token, after a `POST`.
    var inspection: IdentityTokenInspection?
    /// The HTTP status identify would answer the token's refusal with (the API's mapping), if refused.
    var refusalStatus: Int?
    var viewer: ConsoleViewer

    var title: String { "Identity-token inspector" }
    var section: ConsoleSection? { .inspector }

    func render(_ html: inout HTML) {
        html.element(
            "p",
            text:
                "Paste an identity token your backend minted: every check identify makes, with its verdict, against this project's secrets and settings. The token is not stored or logged."
        )
        html.element("form", [("method", "post"), ("action", "inspector"), ("class", "stack")]) { html in
            html.hidden("csrf", viewer.csrf)
            html.element("label", [("for", "token")], text: "Identity token")
            html.element(
                "textarea", [("id", "token"), ("name", "token"), ("required", ""), ("spellcheck", "false")]
            ) { _ in }
            html.element("button", [("type", "submit")], text: "Inspect")
        }
        guard let inspection else { return }
        html.element("section", [("aria-labelledby", "verdict-title")]) { html in
            html.element("h2", [("id", "verdict-title")], text: "Verdict")
            if let error = inspection.error {
                let code = ErrorCode(rawValue: error.code.rawValue)
                html.element("p", [("id", "verdict"), ("data-code", code.rawValue)]) { html in
                    html.text("identify would answer ")
                    html.element("strong", text: "\(refusalStatus.map(String.init) ?? "") \(code.rawValue)")
                    html.text(": \(error.message)")
                }
            } else if let claims = inspection.claims {
                html.element("p", [("id", "verdict"), ("data-code", "ok")]) { html in
                    html.text("identify would accept it for ")
                    html.element("strong", text: claims.subject)
                    html.text(inspection.keyID.map { ", signed with \($0)." } ?? ".")
                }
            }
            ConsoleParts.table(
                &html, caption: "Checks, in the verifier's order", headers: ["Check", "Verdict", "Detail"],
                rows: inspection.checks
            ) {
                html, check in
                html.element("td", text: check.name)
                html.element("td", [("class", "verdict-\(check.verdict.rawValue)")], text: check.verdict.rawValue)
                html.element("td", text: check.detail)
            }
            if let header = inspection.header {
                html.element("h3", text: "Header (decoded, not trusted)")
                html.element("pre") { $0.element("code", text: header) }
            }
            if let payload = inspection.payload {
                html.element("h3", text: "Payload (decoded, not trusted)")
                html.element("pre") { $0.element("code", text: payload) }
            }
        }
    }
}
