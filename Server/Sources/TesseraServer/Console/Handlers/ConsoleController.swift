import HTTPTypes
import Hummingbird
import Logging

/// A failure the console shows as a page: its status, its code (`data-code`) and a sentence.
struct ConsoleFailure: Error, Sendable {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var headers: HTTPFields = [:]
    /// The form field at fault, when there is one: the message is shown beside it.
    var field: String?

    static let forbidden = ConsoleFailure(
        status: .forbidden, code: "operator_forbidden", message: "Your role does not allow this action.")
    static let csrf = ConsoleFailure(
        status: .forbidden, code: "csrf_token_invalid",
        message: "This form has expired or did not come from the console. Reload the page and try again.")
    static let reauthenticate = ConsoleFailure(
        status: .forbidden, code: "operator_reauthentication_required",
        message: "This action needs your password: enter it with the action.", field: "password")

    /// A wrong password with an action: nothing was done.
    static func wrongPassword(remaining: Int64) -> ConsoleFailure {
        ConsoleFailure(
            status: .forbidden, code: "operator_password_wrong",
            message:
                "The password is not right; nothing was done. After \(remaining) more wrong \(remaining == 1 ? "password" : "passwords") you will be signed out.",
            field: "password")
    }

    /// A bad value in one field of a form.
    static func invalid(_ field: String, _ message: String, code: String = "invalid_request") -> ConsoleFailure {
        ConsoleFailure(status: .badRequest, code: code, message: message, field: field)
    }
}

/// One request of a signed-in operator: who, which project, and the form of a `POST`.
struct ConsoleRequest: Sendable {
    var request: Request
    var context: TesseraRequestContext
    var viewer: ConsoleViewer
    var runtime: ProjectRuntime
    var session: OperatorSessionRecord
    var form: ConsoleForm
    var query: ConsoleForm
    /// The session cookie's token (it seals the session's flashes; never written anywhere).
    var sessionToken: String
    /// The form this page re-renders because it was refused, if any.
    var refusal: ConsoleRefusal?

    /// The origin of the events an operator's action records: the operator, the client address, and
    /// the reason they gave, if any.
    func origin(addresses: ClientAddressReader, reason: String? = nil) -> EventOrigin {
        var origin = EventOrigin(
            actor: EventActor(kind: .operator, id: viewer.operatorID),
            clientAddress: addresses.key(request, context: context))
        origin.reason = reason
        return origin
    }
}

/// The operator console: server-rendered pages at `/console/`, on the same origin as the API.
///
/// Every page but sign-in and enrollment needs a console session (an HttpOnly, SameSite=Strict
/// cookie); every `POST` carries the session's CSRF token; each action names the least role that may
/// take it, and destructive ones need the operator's password with the form. Actions go through
/// ``AdminActions``, the same code as the admin API, and record the operator as their actor.
struct ConsoleController: Sendable {
    let core: TesseraCore
    let accounts: OperatorAccounts
    let addresses: ClientAddressReader
    /// The overview's counts, a minute old at most.
    let counts = BackgroundCountsCache<ProjectCounts>()
    /// The overview's App Attest counts (installations by verdict), a minute old at most.
    let attestCounts = BackgroundCountsCache<AppAttestCounts>()

    init(core: TesseraCore, addresses: ClientAddressReader) {
        self.core = core
        self.accounts = core.operators
        self.addresses = addresses
    }

    var actions: AdminActions { AdminActions(core: core) }

    /// What one page or action requires.
    struct Requirement: Sendable {
        /// The least role.
        var role: OperatorRole = .viewer
        /// Whether the operator's password must come with the form (fresh re-authentication).
        var password = false
        /// The page a refused form is re-rendered on (and where `GET` of its address goes).
        var back: ConsoleBack? = nil
    }

    typealias Handler = @Sendable (ConsoleRequest) async throws -> Response

    /// The console's routes: method, path and handler.
    func routes() -> [(HTTPRequest.Method, String, Endpoint.Handler)] {
        var routes: [(HTTPRequest.Method, String, Endpoint.Handler)] = [
            (.get, "/console/assets/console.css", { _, _ in ConsoleAssets.response(.css) }),
            (.get, "/console/assets/console.js", { _, _ in ConsoleAssets.response(.javascript) }),
            (.get, "/console/login", loginPage),
            (.post, "/console/login", logIn),
            (.get, "/console/enroll", enrollmentPage),
            (.post, "/console/enroll", enroll),
        ]
        let pages: [(HTTPRequest.Method, String, Requirement, Handler)] = [
            (.post, "/console/logout", Requirement(back: .overview), logOut),
            (.post, "/console/project", Requirement(back: .overview), switchProject),
            (.get, "/console/search", Requirement(), search),
            (.get, "/console/profiles", Requirement(), profiles),
            (.get, "/console/profiles.csv", Requirement(role: .admin), profilesCSV),
            (.get, "/console/profile", Requirement(), profile),
            (.get, "/console/sessions", Requirement(), sessions),
            (.post, "/console/revoke-session", Requirement(role: .support, back: .profile), revokeSession),
            (.post, "/console/revoke-sessions", Requirement(role: .support, back: .profile), revokeSessions),
            (.post, "/console/remove-device", Requirement(role: .support, back: .profile), removeDevice),
            (.post, "/console/block", Requirement(role: .admin, password: true, back: .profile), block),
            (.post, "/console/unblock", Requirement(role: .admin, back: .profile), unblock),
            (.post, "/console/erase", Requirement(role: .admin, password: true, back: .profile), erase),
            // Any other page: the console's own not-found page, not the API's JSON.
            (.get, "/console/**", Requirement(), { _ in throw CoreError(.notFound, "There is no such page.") }),
        ]
        let all = pages + morePages()
        let gets = Set(all.filter { $0.0 == .get }.map(\.1))
        for (method, path, requirement, handler) in all {
            routes.append((method, path, signedIn(requirement, handler)))
            // `GET` of a form's address (a bookmark, a reload of a refused form's page) goes to the
            // page the form lives on, never to the API's JSON 405.
            if method == .post, !gets.contains(path), let back = requirement.back {
                let home = ConsoleURL(back.home)
                routes.append((.get, path, { _, _ in ConsoleHTTP.redirect(home) }))
            }
        }
        // The router matches `/console` and `/console/` alike; the page's relative links need the
        // slash, so the overview answers only there and sends `/console` to `console/`.
        let overview = signedIn(Requirement(), overview)
        routes.append(
            (
                .get, "/console",
                { request, context in
                    guard request.uri.path.hasSuffix("/") else { return ConsoleHTTP.redirect(location: "console/") }
                    return try await overview(request, context)
                }
            ))
        return routes
    }

    // MARK: The signed-in wrapper

    /// `handler` behind the console session, the CSRF check of a `POST`, the role and the password.
    ///
    /// A refused `POST` whose requirement names a ``ConsoleBack`` page is answered with that page,
    /// re-rendered in place with the refusal beside its field and the input kept (4xx); any other
    /// failure is an error page.
    func signedIn(_ requirement: Requirement, _ handler: @escaping Handler) -> Endpoint.Handler {
        { request, context in
            guard let token = ConsoleHTTP.cookie(ConsoleHTTP.sessionCookie, in: request),
                let (session, account) = try await accounts.session(token: token)
            else {
                return ConsoleHTTP.redirect(ConsoleURL("login"))
            }
            var viewer: ConsoleViewer?
            var accepted: ConsoleRequest?
            do {
                let (projects, runtime) = try await project(for: request)
                let current = ConsoleViewer(
                    operatorID: account.id, email: account.email, role: account.role, csrf: session.csrfToken,
                    projects: projects, project: runtime.project)
                viewer = current
                var form = ConsoleForm(fields: [])
                if request.method == .post {
                    form = try await ConsoleHTTP.form(request)
                    guard let csrf = form["csrf"], session.matchesCSRF(csrf) else {
                        throw ConsoleFailure.csrf
                    }
                }
                let consoleRequest = ConsoleRequest(
                    request: request, context: context, viewer: current, runtime: runtime, session: session,
                    form: form, query: ConsoleHTTP.query(request), sessionToken: token)
                accepted = consoleRequest
                guard current.may(requirement.role) else { throw ConsoleFailure.forbidden }
                if requirement.password {
                    guard let password = form["password"], !password.isEmpty else {
                        throw ConsoleFailure.reauthenticate
                    }
                    switch try await accounts.reauthenticate(
                        account, password: password, sessionID: session.id,
                        clientAddress: addresses.key(request, context: context))
                    {
                    case .accepted: break
                    case .wrong(let remaining): throw ConsoleFailure.wrongPassword(remaining: remaining)
                    case .signedOut:
                        var headers = HTTPFields()
                        headers[.setCookie] = ConsoleHTTP.setCookie(
                            ConsoleHTTP.sessionCookie, "", maxAge: 0, request: request)
                        return ConsoleHTTP.redirect(
                            ConsoleURL("login", [("notice", "too-many-passwords")]), headers: headers)
                    }
                }
                return try await handler(consoleRequest)
            } catch {
                if let accepted, let back = requirement.back, request.method == .post,
                    let response = await refused(accepted, error, back: back)
                {
                    return response
                }
                return failurePage(error, viewer: viewer, context: context)
            }
        }
    }

    /// The page `back` names, re-rendered with the refusal of `error` beside its field; nil when that
    /// page itself cannot be shown (then the error page stands).
    func refused(_ request: ConsoleRequest, _ error: any Error, back: ConsoleBack) async -> Response? {
        let failure: ConsoleFailure
        switch error {
        case let error as ConsoleFailure: failure = error
        case let error as CoreError:
            let api = APIError(error)
            failure = ConsoleFailure(
                status: api.status, code: api.code.rawValue, message: api.message, headers: api.headers)
        case let error as ConsoleError: failure = Self.failure(error)
        default: return nil
        }
        // A refusal is a 4xx; a server failure keeps its error page.
        guard (400..<500).contains(failure.status.code), failure.status != .notFound || failure.field != nil,
            let handler = pageHandler(back.page)
        else { return nil }
        var page = request
        page.query = ConsoleForm(
            fields: back.query.compactMap { name, field in request.form[field].map { (name, $0) } })
        page.refusal = ConsoleRefusal(
            action: String(request.request.uri.path.split(separator: "/").last ?? ""), field: failure.field,
            code: failure.code, message: failure.message, status: failure.status, form: request.form.withoutPasswords)
        guard var response = try? await handler(page), response.status == .ok else { return nil }
        response.status = failure.status
        for field in failure.headers { response.headers.append(field) }
        return response
    }

    /// The `GET` handler of a page, by name (the pages a refused form goes back to).
    func pageHandler(_ page: String) -> Handler? {
        switch page {
        case "": overview
        case "profile": profile
        case "keys": keys
        case "webhooks": webhooks
        case "webhook": webhook
        case "operators": operators
        default: nil
        }
    }

    /// Every project, and the runtime of the one the operator selected (the first by default).
    private func project(for request: Request) async throws -> ([ProjectRecord], ProjectRuntime) {
        let projects = try await core.store.allProjects()
        let chosen = ConsoleHTTP.cookie(ConsoleHTTP.projectCookie, in: request)
        guard let selected = projects.first(where: { $0.id == chosen }) ?? projects.first,
            let runtime = try await core.projects.runtime(projectID: selected.id)
        else {
            throw ConsoleFailure(
                status: .notFound, code: "not_found",
                message: "This deployment has no project yet: create one with `tessera projects create`.")
        }
        return (projects, runtime)
    }

    /// An error as a page: the console's own failures, core errors with their API status and code.
    func failurePage(_ error: any Error, viewer: ConsoleViewer?, context: TesseraRequestContext) -> Response {
        let failure: ConsoleFailure
        switch error {
        case let error as ConsoleFailure:
            failure = error
        case let error as CoreError:
            let api = APIError(error)
            failure = ConsoleFailure(
                status: api.status, code: api.code.rawValue, message: api.message, headers: api.headers)
        case let error as ConsoleError:
            failure = Self.failure(error)
        default:
            context.logger.error("console error", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            failure = ConsoleFailure(
                status: .internalServerError, code: "internal_error", message: "An internal error occurred.")
        }
        let message = ConsoleMessage.error(failure.code, failure.message)
        let page = FailurePage(notFound: failure.status == .notFound, signedIn: viewer != nil)
        let bytes = viewer.map { page.page(viewer: $0, message: message) } ?? page.barePage(message: message)
        return ConsoleHTTP.html(bytes, status: failure.status, headers: failure.headers)
    }

    /// A page of the signed-in console, rendered from its values (`Console/Pages/`); `message`, when
    /// nil, is the request's refusal or the notice its redirect named.
    func page(
        _ request: ConsoleRequest, _ page: some ConsolePage, message: ConsoleMessage? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        self.page(request, title: page.title, section: page.section, message: message, status: status) {
            page.render(&$0)
        }
    }

    /// A page of the signed-in console whose content `content` writes.
    func page(
        _ request: ConsoleRequest, title: String, section: ConsoleSection?, message: ConsoleMessage? = nil,
        status: HTTPResponse.Status = .ok, content: (inout HTML) -> Void
    ) -> Response {
        ConsoleHTTP.html(
            ConsoleLayout.page(
                title: title, section: section, viewer: request.viewer,
                message: message ?? request.refusal.map { .error($0.code, $0.message) }
                    ?? ConsoleNotice.message(request.query["notice"]), content: content),
            status: status)
    }

    // MARK: Session and project

    /// `POST /console/logout`
    func logOut(_ request: ConsoleRequest) async throws -> Response {
        try await accounts.logOut(sessionID: request.session.id)
        var headers = HTTPFields()
        headers[.setCookie] = ConsoleHTTP.setCookie(
            ConsoleHTTP.sessionCookie, "", maxAge: 0, request: request.request)
        return ConsoleHTTP.redirect(ConsoleURL("login", [("notice", "signed-out")]), headers: headers)
    }

    /// `POST /console/project`: selects the project the pages show.
    func switchProject(_ request: ConsoleRequest) async throws -> Response {
        guard let id = request.form["project_id"], let project = request.viewer.projects.first(where: { $0.id == id })
        else { throw CoreError.invalidRequest("Choose one of the projects.") }
        var headers = HTTPFields()
        headers[.setCookie] = ConsoleHTTP.setCookie(
            ConsoleHTTP.projectCookie, project.id, maxAge: 31_536_000, request: request.request)
        return ConsoleHTTP.redirect(ConsoleURL(""), headers: headers)
    }
}

/// The notices a redirect after an action names (`?notice=revoked`): fixed sentences, so a link
/// cannot put words on a page.
enum ConsoleNotice {
    static let sentences: [String: String] = [
        "signed-out": "You have signed out.",
        "too-many-passwords":
            "Too many wrong passwords at actions: you were signed out. Sign in again; your password works.",
        "unlocked": "The operator can sign in again.",
        "key-rotated": "The key was rotated.",
        "enrolled": "Your password is set. Sign in.",
        "revoked": "The session was ended.",
        "revoked-all": "Every session of the profile was ended.",
        "device-removed": "The device was removed.",
        "blocked": "The profile is blocked: its sessions and devices were ended.",
        "unblocked": "The profile is unblocked.",
        "erased": "The profile was erased.",
        "settings-saved": "The settings were saved.",
        "secret-deleted": "The identity secret was deleted.",
        "webhook-updated": "The webhook was updated.",
        "webhook-deleted": "The webhook was deleted.",
        "replayed": "The events were queued for delivery again.",
        "test-sent": "A test event was queued.",
        "operator-removed": "The operator was removed.",
        "project-switched": "Switched project.",
    ]

    static func message(_ key: String?) -> ConsoleMessage? {
        guard let key, let sentence = sentences[key] else { return nil }
        return .notice(sentence)
    }
}
