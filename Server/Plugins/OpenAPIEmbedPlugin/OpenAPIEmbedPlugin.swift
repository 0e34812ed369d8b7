import PackagePlugin

/// Compiles `Server/openapi.json` into the target it is applied to, as `OpenAPIDocument.json`.
///
/// The build runs the `OpenAPIEmbed` tool, which writes a Swift file into the plugin's work directory
/// (inside `.build`, never in git). `openapi.json` is the command's one declared input, so SwiftPM
/// runs the tool again, and recompiles the target, only when that file changes. The document ends up
/// inside the `tessera` binary: no resource bundle beside it, so one copied binary is a whole install.
@main
struct OpenAPIEmbedPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let document = context.package.directoryURL.appending(path: "openapi.json")
        let output = context.pluginWorkDirectoryURL.appending(path: "OpenAPIDocument+Embedded.swift")
        return [
            .buildCommand(
                displayName: "Embedding openapi.json in \(target.name)",
                executable: try context.tool(named: "OpenAPIEmbed").url,
                arguments: [document.path(percentEncoded: false), output.path(percentEncoded: false)],
                inputFiles: [document],
                outputFiles: [output]
            )
        ]
    }
}
