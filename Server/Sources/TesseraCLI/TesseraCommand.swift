import ArgumentParser
import TesseraServer

@main
struct TesseraCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tessera", abstract: "The Tessera server.")
    func run() async throws {}
}
