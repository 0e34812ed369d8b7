/// What search (`GET /console/search?q=`) shows when nothing matches: the search redirects to a
/// profile or a webhook it finds, so this page is the one answer it renders.
struct SearchPage: ConsolePage {
    /// What was searched for.
    var text: String

    var title: String { "Search" }
    var section: ConsoleSection? { nil }

    /// The refusal at the top of the page, quoting (the start of) what was searched for.
    var message: ConsoleMessage {
        .error("not_found", "Nothing in this project matches “\(text.prefix(120))”.")
    }

    func render(_ html: inout HTML) {
        html.element(
            "p",
            text:
                "Search takes a profile ID (usr_…), a session ID (ses_…), a device ID (dev_…), a webhook ID (whk_…), an installation ID, an external user ID, an email or a push token. To find profiles by the start of an email, name or external ID, use the search field of the profile list."
        )
    }
}
