#if canImport(Security)
    public import Foundation
    import Security

    /// A credential store in the Keychain: generic-password items, readable after the first unlock,
    /// on this device only, never synchronised to iCloud.
    ///
    /// Every decision (what a "not found" means, add-only first writes, quarantine, which failures are
    /// permanent) is made by shared code (`KeychainBackedStore`, tested on Linux); this type only maps
    /// its four calls to `SecItem…` and their `OSStatus`. A keychain that cannot be read yet (before the first unlock, during
    /// pre-warming) throws ``CredentialStoreError/unavailable(_:)``, which the SDK publishes as
    /// ``UnavailableReason/storageUnavailable`` and retries: it never treats it as signed out.
    public struct KeychainCredentialStore: CredentialStore {
        /// The keychain service of the items.
        public let service: String
        /// The access group, for apps sharing state with extensions.
        public let accessGroup: String?
        /// Whether items go to the data-protection keychain on macOS.
        public let useDataProtectionKeychain: Bool
        private let store: KeychainBackedStore

        /// Creates a keychain store.
        /// - Parameters:
        ///   - service: The item service (default `dev.tessera.<bundle identifier>`).
        ///   - accessGroup: A keychain access group, or nil.
        ///   - useDataProtectionKeychain: On macOS, keep the items in the data-protection keychain
        ///     (`kSecUseDataProtectionKeychain`), the default: only there do "this device only"
        ///     (`kSecAttrAccessible`) and the `accessGroup` take effect, and no prompt is ever shown. It
        ///     needs a signed app with a keychain-access-groups entitlement: unsigned command-line tools
        ///     and `swift test` get `errSecMissingEntitlement` (`storage_misconfigured`) and pass false
        ///     (the login keychain; no access group then). An item the other keychain holds (an earlier
        ///     version's) is moved once. No effect on iOS, tvOS, watchOS and visionOS.
        ///   - installationMarker: The marker that detects a reinstall. By default a file in the app's
        ///     Application Support directory; with an `accessGroup` there is none unless you pass one in
        ///     the app group's container (an extension has its own container, and would take the app for
        ///     a reinstalled one).
        public init(
            service: String? = nil, accessGroup: String? = nil, useDataProtectionKeychain: Bool = true,
            installationMarker: InstallationMarker? = nil
        ) {
            let service = service ?? "dev.tessera.\(Bundle.main.bundleIdentifier ?? "app")"
            self.service = service
            self.accessGroup = accessGroup
            self.useDataProtectionKeychain = useDataProtectionKeychain
            let attributes = KeychainItemAttributes(
                service: service, accessGroup: accessGroup, useDataProtectionKeychain: useDataProtectionKeychain)
            // Earlier versions used one keychain or the other on macOS: migrate from the other one once.
            let legacy: SecItemKeychain?
            #if os(macOS)
                legacy = SecItemKeychain(
                    attributes: KeychainItemAttributes(
                        service: service, accessGroup: useDataProtectionKeychain ? nil : accessGroup,
                        useDataProtectionKeychain: !useDataProtectionKeychain))
            #else
                legacy = nil
            #endif
            let marker =
                installationMarker
                ?? (accessGroup == nil ? InstallationMarker.applicationSupport(service: service) : nil)
            store = KeychainBackedStore(
                keychain: SecItemKeychain(attributes: attributes), legacyKeychain: legacy,
                installationMarker: marker, lockFile: marker.map { $0.file.path + ".lock" })
        }

        public func load(_ key: String) throws(CredentialStoreError) -> Data? { try store.load(key) }
        public func save(_ data: Data, for key: String) throws(CredentialStoreError) { try store.save(data, for: key) }
        public func remove(_ key: String) throws(CredentialStoreError) { try store.remove(key) }
        public func create(_ data: Data, for key: String) throws(CredentialStoreError) -> Data? {
            try store.create(data, for: key)
        }
        public func quarantine(_ key: String) throws(CredentialStoreError) { try store.quarantine(key) }
        public var installationMarker: InstallationMarker? { store.installationMarker }
        /// Excludes the other clients of the items: across processes through a lock file beside the
        /// installation marker (pass a marker in the app group's container to share the items with
        /// extensions), else in this process only.
        public func withExclusiveAccess<Result>(
            to key: String, _ body: () throws(CredentialStoreError) -> Result
        ) throws(CredentialStoreError) -> Result {
            try store.withExclusiveAccess(to: key, body)
        }
    }

    /// The four `SecItem…` calls over generic-password items with the given attributes; no decisions.
    struct SecItemKeychain: KeychainAccess {
        let attributes: KeychainItemAttributes

        private func query(_ account: String) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: attributes.service,
                kSecAttrAccount as String: account,
                kSecAttrSynchronizable as String: attributes.synchronizable,
            ]
            if let group = attributes.accessGroup { query[kSecAttrAccessGroup as String] = group }
            if attributes.useDataProtectionKeychain { query[kSecUseDataProtectionKeychain as String] = true }
            return query
        }

        func read(account: String) -> KeychainRead {
            var query = query(account)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: AnyObject?
            let status = KeychainStatus(osStatus: SecItemCopyMatching(query as CFDictionary, &result))
            guard status == .success else { return .failed(status) }
            return .found(result as? Data ?? Data())
        }

        func add(_ data: Data, account: String) -> KeychainStatus {
            var item = query(account)
            item[kSecValueData as String] = data
            if attributes.accessibleAfterFirstUnlockThisDeviceOnly {
                item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            }
            return KeychainStatus(osStatus: SecItemAdd(item as CFDictionary, nil))
        }

        func update(_ data: Data, account: String) -> KeychainStatus {
            var changes: [String: Any] = [kSecValueData as String: data]
            if attributes.accessibleAfterFirstUnlockThisDeviceOnly {
                changes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            }
            return KeychainStatus(osStatus: SecItemUpdate(query(account) as CFDictionary, changes as CFDictionary))
        }

        func delete(account: String) -> KeychainStatus {
            KeychainStatus(osStatus: SecItemDelete(query(account) as CFDictionary))
        }
    }
#endif
