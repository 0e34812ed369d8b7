#if canImport(DeviceCheck)
    public import Foundation
    import DeviceCheck

    /// The default ``AppAttestProvider`` on Apple platforms: a thin adapter over `DCAppAttestService`.
    ///
    /// It only forwards and maps `DCError` to ``AppAttestError``; the SDK decides when each call is made.
    /// The app needs the App Attest capability (entitlement
    /// `com.apple.developer.devicecheck.appattest-environment`) for production keys.
    public struct SystemAppAttestProvider: AppAttestProvider {
        /// Creates the provider.
        public init() {}

        public var isSupported: Bool { DCAppAttestService.shared.isSupported }

        public func generateKey() async throws -> String {
            do { return try await DCAppAttestService.shared.generateKey() } catch { throw Self.map(error) }
        }

        public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
            do {
                return try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash)
            } catch {
                throw Self.map(error)
            }
        }

        public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
            do {
                return try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash)
            } catch {
                throw Self.map(error)
            }
        }

        static func map(_ error: any Error) -> AppAttestError {
            guard let error = error as? DCError else { return .wrapping(error) }
            switch error.code {
            case .invalidKey: return .invalidKey
            case .featureUnsupported: return .featureUnsupported
            case .serverUnavailable: return .serverUnavailable
            case .invalidInput: return .failed("invalid input")
            case .unknownSystemFailure: return .failed("unknown system failure")
            @unknown default: return .failed("DCError \(error.code.rawValue)")
            }
        }
    }
#endif
