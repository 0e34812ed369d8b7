// Writes a Swift file whose `OpenAPIDocument.json` is the text of an OpenAPI document, byte for byte.
//
//     OpenAPIEmbed INPUT.json OUTPUT.swift
//
// Run by the OpenAPIEmbedPlugin build-tool plugin at build time; nobody needs to run it by hand. The
// document becomes a raw string literal (measured: type-checking and compiling ~220 KB as a raw
// string literal takes well under a second, where a `[UInt8]` array literal of the same bytes takes
// minutes). Checks nothing about the JSON itself: `scripts/openapi-check` lints the document.

import Foundation

/// A failure with the message the build log shows.
struct EmbedError: Error, CustomStringConvertible {
    let description: String
}

/// The Swift source that carries `text` as `OpenAPIDocument.json`, byte for byte.
///
/// A raw multiline literal with more `#` than any run of `#` in the text that follows a `"` or a
/// `\`, so nothing in the text can close the literal or start an escape. The line break before the
/// closing delimiter is not part of the literal, and a closing delimiter in column 0 strips no
/// indentation. The literal would fold a carriage return into a line feed, and the compiler refuses
/// other control characters in source, so those are written as `\#u{…}` escapes.
func swiftSource(for text: String, from inputName: String) -> String {
    var longestRun = 0
    var run = 0
    var counting = false
    for scalar in text.unicodeScalars {
        if scalar == "#" {
            if counting {
                run += 1
                longestRun = max(longestRun, run)
            }
        } else {
            counting = scalar == "\"" || scalar == "\\"
            run = 0
        }
    }
    let hashes = String(repeating: "#", count: longestRun + 1)
    var body = ""
    body.reserveCapacity(text.utf8.count + 64)
    for scalar in text.unicodeScalars {
        if (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || scalar.value == 0x7F {
            body += "\\\(hashes)u{\(String(scalar.value, radix: 16))}"
        } else {
            body.unicodeScalars.append(scalar)
        }
    }
    return "// Generated at build time by the OpenAPIEmbed tool from \(inputName): do not edit.\n\n"
        + "extension OpenAPIDocument {\n"
        + "    /// The text of `Server/openapi.json`, byte for byte.\n"
        + "    static let json: String = \(hashes)\"\"\"\n"
        + body + "\n"
        + "\"\"\"\(hashes)\n"
        + "}\n"
}

func run(_ arguments: [String]) throws {
    guard arguments.count == 3 else {
        throw EmbedError(description: "usage: OpenAPIEmbed INPUT.json OUTPUT.swift")
    }
    let input = URL(fileURLWithPath: arguments[1])
    let output = URL(fileURLWithPath: arguments[2])
    let bytes = try Data(contentsOf: input)
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw EmbedError(description: "\(input.path) is not UTF-8 text")
    }
    let source = swiftSource(for: text, from: input.lastPathComponent)
    try Data(source.utf8).write(to: output)
}

do {
    try run(CommandLine.arguments)
} catch {
    FileHandle.standardError.write(Data("OpenAPIEmbed: error: \(error)\n".utf8))
    exit(1)
}
