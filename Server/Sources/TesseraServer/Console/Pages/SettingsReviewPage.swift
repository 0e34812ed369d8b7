/// The settings' review before saving (`POST /console/settings`): what will change, and the
/// form that saves exactly that.
struct SettingsReviewPage: ConsolePage {
    /// Each changed setting by its label, before and after.
    var changes: [(label: String, before: String, after: String)]
    /// The settings after saving.
    var proposed: ProjectSettings
    /// The project's `updated_at` the change was made from.
    var base: Int64
    var viewer: ConsoleViewer

    var title: String { "Review the settings" }
    var section: ConsoleSection? { .settings }

    func render(_ html: inout HTML) {
        ConsoleParts.table(
            &html, caption: "What will change", headers: ["Setting", "Now", "After saving"], rows: changes
        ) {
            html, change in
            html.element("td", text: change.label)
            html.element("td") { $0.element("del", text: change.before.isEmpty ? "(none)" : change.before) }
            html.element("td") { $0.element("ins", text: change.after.isEmpty ? "(none)" : change.after) }
        }
        html.element("form", [("method", "post"), ("action", "settings"), ("class", "inline-form")]) { html in
            html.hidden("csrf", viewer.csrf)
            html.hidden("base", String(base))
            html.hidden("confirm", "1")
            for field in SettingsPage.fields {
                let value = field.value(proposed)
                if field.kind == .flag {
                    if value == "true" {
                        html.void("input", [("type", "hidden"), ("name", field.name), ("value", "true")])
                    }
                } else {
                    html.void("input", [("type", "hidden"), ("name", field.name), ("value", value)])
                }
            }
            html.element("button", [("type", "submit")], text: "Save these changes")
            html.link(ConsoleURL("settings"), text: "Cancel")
        }
    }
}
