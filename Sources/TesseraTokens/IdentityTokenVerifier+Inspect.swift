public import Foundation

extension IdentityTokenVerifier {
    /// Runs every check of `verify(_:now:)` on `token` at time `now` and reports each verdict.
    ///
    /// For the operator console's token inspector. Unlike `verify`, it does not stop at the first
    /// failure: a token whose signature fails still has its claims checked and reported, though
    /// ``IdentityTokenInspection/error`` stays the signature error, as `verify` reports it. The
    /// token is neither stored nor logged, and no detail contains a secret or the signature.
    ///
    /// This is slower than `verify` (it writes a sentence per check); keep it off hot paths.
    /// - Parameters:
    ///   - token: the compact identity token.
    ///   - now: the time to check it at.
    /// - Returns: the inspection; its `error` is exactly what `verify` throws for `token` and `now`.
    public func inspect(_ token: String, now: Date) -> IdentityTokenInspection {
        var recorder = InspectionRecorder()
        var evaluation = Evaluation()
        do {
            evaluation = try evaluate(token, now: now, recording: &recorder)
        } catch {
            // An inspection recorder never throws; were it to, its error would still be verify's.
            if recorder.error == nil { recorder.error = error }
        }
        let passed = recorder.error == nil
        return IdentityTokenInspection(
            checks: recorder.checks,
            header: Self.decodedSegment(of: token, at: 0),
            payload: Self.decodedSegment(of: token, at: 1),
            keyID: evaluation.keyID,
            claims: passed ? evaluation.claims : nil,
            error: recorder.error
        )
    }

    /// The UTF-8 text a segment of `token` decodes to, even when the token as a whole is malformed.
    private static func decodedSegment(of token: String, at index: Int) -> String? {
        // Far beyond the verifier's 8 KiB cap: an operator's paste, not an attack surface.
        guard token.utf8.count <= 64 * 1024 else { return nil }
        let segments = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard index < segments.count, let bytes = Base64URL.decode(Substring(segments[index])) else { return nil }
        return String(bytes: bytes, encoding: .utf8)
    }
}
