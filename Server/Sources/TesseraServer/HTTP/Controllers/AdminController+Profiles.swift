import Hummingbird

extension AdminController {
    /// `GET /v1/admin/profiles?kind=&verified=&email=&search=&external_id=&installation_id=&blocked=&created_from=&created_to=&order=&cursor=&limit=`
    /// → `{profiles, next_cursor}`: the project's profiles matching every filter given, newest first
    /// (oldest first with `order=oldest`).
    ///
    /// The store is asked for one profile more than the page: `next_cursor` is null exactly on the
    /// last page. A call with only `external_id` (the first version of this endpoint) answers as
    /// before, with `next_cursor` added.
    func findProfiles(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        let parameters = request.uri.queryParameters
        var query = try ProfileListQuery.parse(projectID: runtime.id) { parameters.get($0) }
        let limit = query.limit
        query.limit = limit + 1
        let found = try await core.store.profiles(query)
        let page = found.prefix(limit)
        let next = found.count > limit ? page.last.map { ProfileListQuery.cursor(after: $0.id) } : nil
        return .json { writer in
            writer.objectStart()
            writer.array("profiles", page) { $0.profile($1, admin: true) }
            writer.field("next_cursor", next)
            writer.objectEnd()
        }
    }

    /// `GET /v1/admin/lookup?q=` → `{profile}`: the profile any identifier names (a profile ID or
    /// alias, a session or device ID, an installation UUID, an external ID or an email); 404 when
    /// none does.
    func lookup(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let runtime = try context.project()
        // Counted in code points, as the document's maxLength counts them.
        guard let identifier = request.uri.queryParameters.get("q"),
            (1...1020).contains(identifier.unicodeScalars.count),
            !identifier.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw CoreError.invalidRequest(
                "The q query parameter (1 to 1020 characters, no control characters) is required.")
        }
        guard let profile = try await core.store.lookupProfile(projectID: runtime.id, identifier: identifier) else {
            throw CoreError.notFound
        }
        return try await profileResponse(profile)
    }

    /// `GET /v1/admin/profiles/{profile_id}/aliases` → `{aliases: [{profile_id, merged_at, how}]}`:
    /// the profiles merged into this one, oldest merge first; 404 for an unknown profile.
    func listAliases(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let profileID = try context.parameters.require("profile_id")
        let runtime = try context.project()
        guard try await core.store.profile(projectID: runtime.id, id: profileID) != nil else {
            throw CoreError.notFound
        }
        let aliases = try await core.store.aliases(projectID: runtime.id, profileID: profileID)
        return .jsonObjects("aliases", aliases) { writer, alias in
            writer.field("profile_id", alias.aliasID)
            writer.time("merged_at", alias.createdAt)
            writer.field("how", alias.how)
        }
    }
}
