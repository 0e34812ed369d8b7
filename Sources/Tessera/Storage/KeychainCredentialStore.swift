#if canImport(Security)
    public import Foundation
    import Security

    /// A credential store in the Keychain: generic-password items, readable after the first unlock,
    /// on this device only, never synchronised to iCloud.
    ///
    /// A keychain that cannot be read yet (before the first unlock, during pre-warming) throws
    /// ``CredentialStoreError/unavailable(_:)``, which the SDK publishes as
    /// ``UnavailableReason/storageUnavailable`` and retries: it never treats it as signed out.
    public struct KeychainCredentialStore: CredentialStore {
        /// The keychain service of the items.
        public let service: String
        /// The access group, for apps sharing state with extensions.
        public let accessGroup: String?

        /// Creates a keychain store.
        /// - Parameters:
        ///   - service: The item service (default `dev.tessera.<bundle identifier>`).
        ///   - accessGroup: A keychain access group, or nil.
        public init(service: String? = nil, accessGroup: String? = nil) {
            self.service = service ?? "dev.tessera.\(Bundle.main.bundleIdentifier ?? "app")"
            self.accessGroup = accessGroup
        }

        private func baseQuery(_ key: String) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: key,
                kSecAttrSynchronizable as String: kCFBooleanFalse as Any,
                kSecUseDataProtectionKeychain as String: true,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        public func load(_ key: String) throws(CredentialStoreError) -> Data? {
            var query = baseQuery(key)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: AnyObject?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            switch status {
            case errSecSuccess:
                guard let data = result as? Data else { throw .corrupted("the keychain item holds no data") }
                return data
            case errSecItemNotFound:
                return nil
            default:
                // errSecInteractionNotAllowed (locked), errSecNotAvailable, and anything else:
                // ambiguous, so never "signed out".
                throw .unavailable("SecItemCopyMatching status \(status)")
            }
        }

        public func save(_ data: Data, for key: String) throws(CredentialStoreError) {
            let attributes: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(baseQuery(key) as CFDictionary, attributes as CFDictionary)
            if status == errSecItemNotFound {
                var item = baseQuery(key)
                item.merge(attributes) { _, new in new }
                status = SecItemAdd(item as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw .unavailable("keychain write status \(status)") }
        }

        public func remove(_ key: String) throws(CredentialStoreError) {
            let status = SecItemDelete(baseQuery(key) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw .unavailable("SecItemDelete status \(status)")
            }
        }
    }
#endif
