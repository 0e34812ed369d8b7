/// The enrollment page for a link that is unknown, used or expired (`GET /console/enroll`): what to
/// ask for instead.
struct ExpiredEnrollmentPage: ConsolePage {
    var title: String { "Enrollment link" }
    var section: ConsoleSection? { nil }

    func render(_ html: inout HTML) {
        html.element("p", text: "Ask an owner for a new link: tessera operators link --email YOUR-EMAIL")
    }
}
