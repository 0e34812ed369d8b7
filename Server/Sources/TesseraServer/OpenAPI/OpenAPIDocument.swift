/// The server's OpenAPI 3.1 document, served verbatim at `GET /openapi.json`.
///
/// It describes exactly the wire contract of `docs/API.md`: every path and method, every request
/// body with its limits, every response including each error response with the shared error schema
/// and the error codes that operation can answer, `X-Request-Id` on every response, `Retry-After` on
/// 429, the four credentials as HTTP bearer security schemes, and links from each creating operation
/// to the `DELETE` that undoes it.
///
/// Its source is `Server/openapi.json`, maintained by hand (no code generator writes the contract).
/// The build copies that file into ``json``: the `OpenAPIEmbedPlugin` build-tool plugin (see
/// `Server/Package.swift`) writes it as a raw string literal into a Swift file inside `.build`,
/// again whenever the file changes, so the one `tessera` binary needs no file beside it and no
/// generated copy lives in git. `OpenAPIDocumentFileTests` checks that `GET /openapi.json` answers the
/// file byte for byte, `scripts/openapi-check` validates the file (strict JSON, OpenAPI 3.1, and a lint
/// against the contract), and `OpenAPIContractTests` holds it against the router's routes and the
/// server's error codes.
enum OpenAPIDocument {}
