import HTTPTypes

/// A form the console refused, re-rendered in place on the page it came from: which form, the field
/// at fault, the message beside it, and what was typed (never a password, which is not written back).
struct ConsoleRefusal: Sendable {
    /// The form's `action` (`block`, `webhook-create`…).
    var action: String
    /// The name of the field at fault; nil when the refusal is about the form as a whole.
    var field: String?
    var code: String
    var message: String
    var status: HTTPResponse.Status
    /// The posted fields.
    var form: ConsoleForm

    /// The refusal when it is about the form posting to `action` whose hidden fields are `fields`
    /// (a table has one form per row: the row's ID tells them apart); nil otherwise.
    func matching(_ action: String, _ fields: [(StaticString, String)] = []) -> ConsoleRefusal? {
        guard action == self.action else { return nil }
        for (name, value) in fields where form[name.description] != value { return nil }
        return self
    }

    /// What was typed in `name`, to write back into the form; never a password.
    func kept(_ name: String) -> String? {
        name == "password" || name.hasSuffix("password") || name == "password_confirmation" ? nil : form[name]
    }
}

/// The page a refused form is re-rendered on: its name and the query it needs, read from the form
/// (`profile?id=` from the form's `profile_id`), and the page a `GET` of the form's address goes to.
struct ConsoleBack: Sendable {
    var page: String
    /// (query name, form field) pairs.
    var query: [(String, String)] = []
    /// Where `GET` of the `POST` address sends the browser (a bookmark, a reload of an error).
    var home: String

    init(_ page: String, query: [(String, String)] = [], home: String? = nil) {
        self.page = page
        self.query = query
        self.home = home ?? page
    }

    static let profile = ConsoleBack("profile", query: [("id", "profile_id")], home: "profiles")
    static let keys = ConsoleBack("keys")
    static let webhooks = ConsoleBack("webhooks")
    static let webhook = ConsoleBack("webhook", query: [("id", "webhook_id")], home: "webhooks")
    static let operators = ConsoleBack("operators")
    static let overview = ConsoleBack("", home: "")
}

extension ConsoleForm {
    /// The fields, without any whose name ends in `password`.
    var withoutPasswords: ConsoleForm {
        ConsoleForm(fields: fields.filter { !$0.name.hasSuffix("password") && $0.name != "password_confirmation" })
    }
}
