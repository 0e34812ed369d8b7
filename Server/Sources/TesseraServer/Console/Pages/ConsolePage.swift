/// A console page's content rendered from plain values: what the page shows is decided by the
/// values it is given, not by a request or a store, so a test renders it without a server.
///
/// A handler parses the request, fetches through the store, builds the page's values and hands
/// them to ``ConsoleLayout`` (through `ConsoleController.page(_:_:message:status:)`), which puts the
/// content in the frame every page shares.
protocol ConsolePage {
    /// The page's title, in `<title>` and its `h1`.
    var title: String { get }
    /// The menu entry the page belongs to, if any.
    var section: ConsoleSection? { get }
    /// Writes the page's content (what goes in `main`, under the title).
    func render(_ html: inout HTML)
}

extension ConsolePage {
    /// The content alone, as HTML.
    var content: HTML {
        var html = HTML()
        render(&html)
        return html
    }

    /// The whole page in the frame of the signed-in console.
    func page(viewer: ConsoleViewer, message: ConsoleMessage? = nil) -> [UInt8] {
        ConsoleLayout.page(title: title, section: section, viewer: viewer, message: message, content: render)
    }

    /// The whole page in the frame of the pages before sign-in (no menu).
    func barePage(message: ConsoleMessage? = nil) -> [UInt8] {
        ConsoleLayout.bare(title: title, message: message, content: render)
    }
}
