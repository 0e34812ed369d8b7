extension ConsoleParts {
    /// The form that rotates an API key of `kind` (`publishable` or `secret`): how long the old key
    /// keeps working (`graceID` names the select), the operator's password and the button; a refusal
    /// of this form keeps the chosen time and marks the password.
    static func rotateKeyForm(
        _ html: inout HTML, kind: String, graceID: StaticString, graceLabel: String, defaultGrace: String,
        passwordID: String, button: String, danger: Bool, csrf: String, refusal: ConsoleRefusal?
    ) {
        let rotating = refusal?.matching("rotate-api-key", [("kind", kind)])
        html.element("form", [("method", "post"), ("action", "rotate-api-key"), ("class", "inline-form")]) { html in
            html.hidden("csrf", csrf)
            html.hidden("kind", kind)
            select(
                &html, id: graceID, label: graceLabel, selected: rotating?.form[graceID.description] ?? defaultGrace,
                options: [("0", "no time (stop now)"), ("3600", "1 hour"), ("86400", "24 hours"), ("604800", "7 days")])
            input(
                &html, id: passwordID, name: "password", label: "Your password", type: "password",
                autocomplete: "current-password", refusal: rotating)
            html.element("button", [("type", "submit"), ("class", danger ? "danger" : nil)], text: button)
        }
    }
}
