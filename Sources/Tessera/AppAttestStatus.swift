/// Whether the SDK proves, with Apple's App Attest, that its starts and identifies come from the
/// genuine app on a genuine device (``TesseraConfiguration/appAttest``).
public enum AppAttestMode: String, Sendable, Hashable, CaseIterable {
    /// Nothing is attested or sent (the default): no challenge requests, no calls to Apple.
    case off
    /// The installation's key is attested at its first start, and restores and identifies assert
    /// with it; devices that cannot attest say so. It can be turned on whatever the project's
    /// `app_attest` mode (see <doc:AppAttest>).
    case automatic
}

/// Where this installation stands with App Attest, as ``TesseraClient/appAttestStatus`` reports it.
///
/// A failure on the device's side never fails a start or signs a user out: the request goes without
/// evidence, and this status (and the log) says why. Whether the server then accepts the request is
/// its project's `app_attest` mode's decision.
public enum AppAttestStatus: Sendable, Hashable {
    /// ``AppAttestMode/off``: nothing is attested.
    case off
    /// No key of this installation was attested yet (before its first start, or after a key was lost).
    case notAttested
    /// The installation's key was attested, or asserted with, in a request the server accepted.
    case attested
    /// The device cannot attest (simulators, some Macs): requests carry `{"unsupported": true}`.
    case unsupported
    /// The device's last attempt failed; that request went without evidence.
    case failed(AppAttestError)
}
