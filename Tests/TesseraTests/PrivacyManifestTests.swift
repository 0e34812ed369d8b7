import Foundation
import Testing

@Suite("Privacy manifest")
struct PrivacyManifestTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Tessera")

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: sources.appendingPathComponent("PrivacyInfo.xcprivacy"))
        let plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        return try #require(plist as? [String: Any])
    }

    @Test("No tracking; user ID, device ID, email and name, linked, for app functionality only")
    func declarations() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true)
        let types = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        let names = Set(types.compactMap { $0["NSPrivacyCollectedDataType"] as? String })
        #expect(
            names == [
                "NSPrivacyCollectedDataTypeUserID", "NSPrivacyCollectedDataTypeDeviceID",
                "NSPrivacyCollectedDataTypeEmailAddress", "NSPrivacyCollectedDataTypeName",
            ])
        for type in types {
            #expect(type["NSPrivacyCollectedDataTypeLinked"] as? Bool == true)
            #expect(type["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(
                type["NSPrivacyCollectedDataTypePurposes"] as? [String]
                    == ["NSPrivacyCollectedDataTypePurposeAppFunctionality"])
        }
    }

    /// The manifest declares no required-reason API: this fails when one appears in the sources, so
    /// that the manifest is updated with its reason.
    @Test("The sources call no required-reason API that the manifest does not declare")
    func requiredReasonAPIs() throws {
        let declared = try #require(Self.manifest()["NSPrivacyAccessedAPITypes"] as? [Any])
        #expect(declared.isEmpty)
        let apis = [
            "UserDefaults", "systemUptime", "mach_absolute_time", "attributesOfItem", "modificationDate",
            "creationDate", "fstat(", "getattrlist", "volumeAvailableCapacity", "systemFreeSize", "statfs",
            "activeInputModes",
        ]
        let files = try #require(FileManager.default.enumerator(atPath: Self.sources.path))
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            for api in apis {
                #expect(!code.contains { $0.contains(api) }, "\(file) uses \(api): declare it in PrivacyInfo.xcprivacy")
            }
        }
    }
}
