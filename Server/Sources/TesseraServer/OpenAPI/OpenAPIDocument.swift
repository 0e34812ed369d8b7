/// The server's OpenAPI 3.1 document, served verbatim at `GET /openapi.json`.
enum OpenAPIDocument {
    static let json: String = #"""
        {"openapi":"3.1.0"}
        """#
}
