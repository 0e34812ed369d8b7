/// The sign-in form (`GET /console/login`), outside the signed-in frame.
struct SignInPage: ConsolePage {
    /// The form's double-submit token (the same value is in the form cookie).
    var formToken: String
    /// The email typed before a refusal, kept.
    var email: String?

    var title: String { "Sign in" }
    var section: ConsoleSection? { nil }

    func render(_ html: inout HTML) {
        html.element("form", [("method", "post"), ("action", "login"), ("class", "stack")]) { html in
            html.hidden("csrf", formToken)
            ConsoleParts.field(
                &html, id: "email", label: "Email", type: "email", value: email, autocomplete: "username")
            ConsoleParts.field(
                &html, id: "password", label: "Password", type: "password", autocomplete: "current-password")
            ConsoleParts.field(
                &html, id: "totp", label: "Authentication code (if you set one up)", type: "text",
                autocomplete: "one-time-code", required: false, extra: [("inputmode", "numeric")])
            html.element("button", [("type", "submit")], text: "Sign in")
        }
    }
}
