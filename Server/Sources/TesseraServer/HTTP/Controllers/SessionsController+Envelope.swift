import HTTPTypes
import Hummingbird

extension SessionsController {
    /// The session envelope of a ``SessionGrant``.
    func envelope(
        _ status: HTTPResponse.Status, _ grant: SessionGrant, runtime: ProjectRuntime, shareSecond: Bool = false
    ) -> Response {
        envelope(
            status, context: grant.context, token: grant.token, runtime: runtime, now: grant.now, merge: grant.merge,
            shareSecond: shareSecond, extensionCapped: grant.extensionCapped)
    }

    /// The session envelope: session, token, JWT, profile, capabilities, server time (and merge).
    func envelope(
        _ status: HTTPResponse.Status, context: SessionContext, token: String?, runtime: ProjectRuntime, now: Int64,
        merge: (outcome: MergeOutcome, fromProfileID: String)?? = nil, shareSecond: Bool = false,
        extensionCapped: Bool? = nil
    ) -> Response {
        let jwt = core.sessions.sessionJWT(for: context, runtime: runtime, now: now, shareSecond: shareSecond)
        return .json(status) { writer in
            writer.objectStart()
            writer.key("session")
            writer.session(context.session)
            writer.field("session_token", token)
            writer.field("session_jwt", jwt)
            writer.key("profile")
            writer.profile(context.profile)
            writer.key("capabilities")
            writer.capabilities(context.session)
            writer.time("server_time", now)
            if let extensionCapped {
                writer.field("extension_capped", extensionCapped)
            }
            if let merge {
                writer.key("merge")
                if let merge {
                    writer.objectStart()
                    writer.field("outcome", merge.outcome.rawValue)
                    writer.field("from_profile_id", merge.fromProfileID)
                    writer.objectEnd()
                } else {
                    writer.null()
                }
            }
            writer.objectEnd()
        }
    }
}
