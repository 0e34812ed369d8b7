/// Enrollment (`GET /console/enroll?token=`): the operator sets a password and may add TOTP, from
/// a QR code drawn on the server (inline SVG) or the key typed; outside the signed-in frame.
struct EnrollmentPage: ConsolePage {
    /// The form's double-submit token (the same value is in the form cookie).
    var formToken: String
    /// The enrollment link's token.
    var token: String
    var email: String
    var role: OperatorRole
    /// The TOTP key offered, in Base32.
    var secretKey: String
    /// The `otpauth://` URI of the key (what the QR code holds).
    var uri: String

    var title: String { "Set up your console account" }
    var section: ConsoleSection? { nil }

    func render(_ html: inout HTML) {
        html.element("p") { html in
            html.text("Signing in as ")
            html.element("strong", text: email)
            html.text(" (\(role.rawValue)).")
        }
        html.element("form", [("method", "post"), ("action", "enroll"), ("class", "stack")]) { html in
            html.hidden("csrf", formToken)
            html.hidden("token", token)
            html.hidden("totp_secret", secretKey)
            ConsoleParts.field(
                &html, id: "password", label: "Password (12 characters or more)", type: "password",
                autocomplete: "new-password", extra: [("minlength", "12")])
            ConsoleParts.field(
                &html, id: "password_confirmation", label: "The same password again", type: "password",
                autocomplete: "new-password", extra: [("minlength", "12")])
            html.element("fieldset") { html in
                html.element("legend", text: "Two-step sign-in (optional)")
                html.element(
                    "p",
                    text:
                        "Scan this code with an authenticator app (or type the key below into it), then enter the code it shows. Leave the code empty to skip."
                )
                // A URI longer than a version-20 code holds (an address of hundreds of characters)
                // leaves the key to be typed.
                if let code = try? QRCode(Array(uri.utf8)) {
                    html.element("p", [("class", "qr")]) { html in
                        code.write(
                            to: &html, pixels: 200, label: "QR code of the two-step key for \(email)")
                    }
                }
                html.element("p") { html in
                    html.element("code", [("id", "totp-secret")], text: secretKey)
                }
                html.element("p", [("class", "small")]) { html in
                    html.element("code", [("id", "totp-uri")], text: uri)
                }
                ConsoleParts.field(
                    &html, id: "totp", label: "Code from the app", type: "text", autocomplete: "one-time-code",
                    required: false, extra: [("inputmode", "numeric")])
            }
            html.element("button", [("type", "submit")], text: "Save")
        }
    }
}
