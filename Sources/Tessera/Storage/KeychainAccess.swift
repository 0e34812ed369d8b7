import Foundation

/// The four keychain calls the SDK makes, on generic-password items of one service, with typed results.
///
/// On Apple platforms ``KeychainCredentialStore`` implements it with `SecItemCopyMatching`, `SecItemAdd`,
/// `SecItemUpdate` and `SecItemDelete` and nothing else; every decision sits in ``KeychainBackedStore``,
/// which the tests run on Linux over a fake keychain that fails the way devices do.
protocol KeychainAccess: Sendable {
    /// `SecItemCopyMatching` for the item's data.
    func read(account: String) -> KeychainRead
    /// `SecItemAdd`: never replaces an item (`duplicateItem` when one exists).
    func add(_ data: Data, account: String) -> KeychainStatus
    /// `SecItemUpdate` of the item's data: never creates one (`itemNotFound`).
    func update(_ data: Data, account: String) -> KeychainStatus
    /// `SecItemDelete`.
    func delete(account: String) -> KeychainStatus
}

/// What a keychain read gave.
enum KeychainRead: Sendable, Equatable {
    /// The item's bytes (empty when the item holds no data).
    case found(Data)
    /// The call failed or found nothing; never `.success`.
    case failed(KeychainStatus)
}

/// A keychain result code (`OSStatus`), named where the SDK decides something on it.
enum KeychainStatus: Sendable, Hashable, CustomStringConvertible {
    case success
    /// `errSecItemNotFound` (-25300). Ambiguous: before the first unlock and during pre-warming the
    /// keychain has answered this for items it holds.
    case itemNotFound
    /// `errSecDuplicateItem` (-25299): an add found an item (another process, or a read that missed it).
    case duplicateItem
    /// `errSecInteractionNotAllowed` (-25308): the device is locked (or not unlocked since boot).
    case interactionNotAllowed
    /// `errSecNotAvailable` (-25291): no keychain is available right now.
    case notAvailable
    /// `errSecMissingEntitlement` (-34018): the app lacks the keychain entitlement (unsigned tools, a
    /// wrong access group, the data-protection keychain without a team ID). Never heals by itself.
    case missingEntitlement
    /// `errSecParam` (-50): the query is invalid. Never heals by itself.
    case invalidParameter
    /// `errSecUserCanceled` (-128): the user cancelled the keychain prompt (macOS).
    case userCanceled
    /// `errSecAuthFailed` (-25293): the keychain prompt's password was wrong, or access was refused (macOS).
    case authFailed
    /// Any other code.
    case other(Int32)

    /// Maps an `OSStatus`.
    init(osStatus: Int32) {
        switch osStatus {
        case 0: self = .success
        case -25300: self = .itemNotFound
        case -25299: self = .duplicateItem
        case -25308: self = .interactionNotAllowed
        case -25291: self = .notAvailable
        case -34018: self = .missingEntitlement
        case -50: self = .invalidParameter
        case -128: self = .userCanceled
        case -25293: self = .authFailed
        default: self = .other(osStatus)
        }
    }

    /// The `OSStatus` value.
    var osStatus: Int32 {
        switch self {
        case .success: return 0
        case .itemNotFound: return -25300
        case .duplicateItem: return -25299
        case .interactionNotAllowed: return -25308
        case .notAvailable: return -25291
        case .missingEntitlement: return -34018
        case .invalidParameter: return -50
        case .userCanceled: return -128
        case .authFailed: return -25293
        case .other(let status): return status
        }
    }

    /// Whether retrying cannot help: the app's entitlements or query must be fixed.
    var isPermanent: Bool { self == .missingEntitlement || self == .invalidParameter }

    /// Whether the user (or the system for them) refused access: asking again at once would prompt again.
    /// (`errSecInteractionNotAllowed` is not a refusal: the device is locked, and unlocking heals it.)
    var isDenial: Bool { self == .userCanceled || self == .authFailed }

    var description: String { "OSStatus \(osStatus)" }
}

/// The attributes of every item the SDK writes, decided here and mapped one to one by the Apple adapter.
struct KeychainItemAttributes: Sendable, Hashable {
    /// `kSecAttrService`.
    var service: String
    /// `kSecAttrAccessGroup`, for apps sharing state with their extensions.
    var accessGroup: String?
    /// `kSecUseDataProtectionKeychain`: on macOS, the data-protection keychain, the only one where
    /// `kSecAttrAccessible` and `kSecAttrAccessGroup` take effect (it needs a signed app with a
    /// keychain entitlement; unsigned tools and `swift test` get -34018 and opt out). iOS-family
    /// keychains are data-protection keychains whatever this says.
    var useDataProtectionKeychain: Bool
    /// `kSecAttrAccessible`: `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`, so that background
    /// launches after the first unlock can read it, and it never leaves the device in a backup.
    var accessibleAfterFirstUnlockThisDeviceOnly = true
    /// `kSecAttrSynchronizable`: never synchronised to iCloud.
    var synchronizable = false
}
