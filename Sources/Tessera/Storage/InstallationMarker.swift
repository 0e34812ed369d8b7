public import Foundation

/// A small file in the app's own container that says "this installation of the app has run".
///
/// The iOS keychain survives the app's deletion; the app's files do not. A state found in the keychain
/// without the marker belongs to a previous installation (see ``ReinstallPolicy``), and a keychain that
/// answers "no item" while the marker is there is not believed at once (before the first unlock and
/// during pre-warming the keychain can answer "not found" for items it holds). The marker is a file
/// read through POSIX calls, not `UserDefaults`, which reads as empty before the first unlock; a file
/// that exists but cannot be read yet (data protection) is reported as unavailable, never as absent.
public struct InstallationMarker: Sendable, Hashable {
    /// The marker file.
    public let file: URL

    /// Creates a marker.
    /// - Parameters:
    ///   - directory: A directory of the app's own container (or of an app group shared with its
    ///     extensions) that is deleted with the app.
    ///   - name: The file name.
    public init(directory: URL, name: String = "tessera.installation") {
        self.file = directory.appendingPathComponent(name)
    }

    /// The default marker of a keychain service: `Application Support/tessera/<service>.installation`.
    static func applicationSupport(service: String) -> InstallationMarker? {
        guard let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        else { return nil }
        let name = service.replacingOccurrences(of: "/", with: "_")
        return InstallationMarker(directory: base.appendingPathComponent("tessera"), name: "\(name).installation")
    }

    /// The marker's installation ID, or nil when there is no marker file.
    func read() throws(CredentialStoreError) -> String? {
        guard let bytes = try POSIXFile.contents(of: file.path, describing: "the installation marker") else {
            return nil
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // An empty or torn marker still proves that the app ran here.
        return text.isEmpty ? "" : text
    }

    /// Writes the marker with `id` unless one exists; returns the marker's ID either way.
    func adopt(_ id: String) throws(CredentialStoreError) -> String {
        do {
            try POSIXFile.makeDirectory(file.deletingLastPathComponent().path)
            if try POSIXFile.createExclusively(Data(id.utf8), at: file.path) {
                applyFilePolicies()
                return id
            }
        } catch {
            throw .unavailable("cannot write the installation marker: \(error)")
        }
        return try read() ?? id
    }

    /// Keeps the marker out of backups (restored onto another device, it would claim an installation
    /// whose this-device-only keychain items did not come along), and readable after the first unlock
    /// like the keychain items, whatever the app's default data protection class.
    private func applyFilePolicies() {
        #if canImport(Darwin)
            var url = file
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            try? url.setResourceValues(values)
        #endif
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            try? FileManager.default.setAttributes(
                [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: file.path)
        #endif
    }
}
