/// A failure as a page (its message is the frame's): "Not found" or "Something went wrong", with
/// the way back to the overview for a signed-in operator.
struct FailurePage: ConsolePage {
    /// Whether nothing was found at the address (otherwise the server failed).
    var notFound: Bool
    /// Whether an operator is signed in (the page then has the console's frame and a way back).
    var signedIn: Bool

    var title: String { notFound ? "Not found" : "Something went wrong" }
    var section: ConsoleSection? { nil }

    func render(_ html: inout HTML) {
        guard signedIn else { return }
        html.element("p") { html in
            html.link(ConsoleURL(""), text: "Back to the overview")
        }
    }
}
