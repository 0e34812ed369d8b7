/// The App Attest environment a key was made in, told apart by the AAGUID of its authenticator data.
public enum AppAttestEnvironment: String, Hashable, Sendable, CaseIterable {
    /// Keys from development builds (the `com.apple.developer.devicecheck.appattest-environment`
    /// entitlement `development`): AAGUID `appattestdevelop`.
    case development
    /// Keys from App Store, TestFlight and Enterprise builds: AAGUID `appattest` followed by seven zero bytes.
    case production

    /// The 16 bytes of this environment's AAGUID.
    public var aaguid: [UInt8] {
        switch self {
        case .development: Array("appattestdevelop".utf8)
        case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        }
    }

    /// The environment whose AAGUID is `aaguid`, or nil for any other value.
    public init?(aaguid: some Collection<UInt8>) {
        guard let environment = Self.allCases.first(where: { $0.aaguid.elementsEqual(aaguid) }) else { return nil }
        self = environment
    }
}
