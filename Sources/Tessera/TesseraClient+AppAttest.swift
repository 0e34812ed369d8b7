extension TesseraClient {
    /// Where this installation stands with App Attest now (``AppAttestStatus/off`` unless
    /// ``TesseraConfiguration/appAttest`` is ``AppAttestMode/automatic``).
    public nonisolated var appAttestStatus: AppAttestStatus { appAttestation.status.current }

    /// The App Attest status now, and every change after it.
    public nonisolated var appAttestUpdates: AsyncStream<AppAttestStatus> { appAttestation.status.stream() }

    /// Whether the server refused an assertion because the installation has no such key: an
    /// `attestation_invalid` with reason `key_id`.
    static func isUnknownKey(_ error: TesseraError) -> Bool {
        error.code == .attestationInvalid && error.reason == "key_id"
    }
}
