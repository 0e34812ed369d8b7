import HTTPTypes
import Hummingbird
import TesseraTokens

/// Signing in and enrollment: the pages before a console session exists.
///
/// Their forms are tied to the browser by a double-submit token: the page sets a random value in
/// an HttpOnly, SameSite=Strict cookie and in a hidden field, and the `POST` must carry both, so
/// another site cannot sign a browser in to an account of its choosing (login CSRF).
extension ConsoleController {
    /// `GET /console/login`
    func loginPage(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        if let token = ConsoleHTTP.cookie(ConsoleHTTP.sessionCookie, in: request),
            try await accounts.session(token: token) != nil
        {
            return ConsoleHTTP.redirect(ConsoleURL(""))
        }
        let query = ConsoleHTTP.query(request)
        return loginForm(request, email: nil, message: ConsoleNotice.message(query["notice"]), status: .ok)
    }

    /// The sign-in form with a fresh form token.
    private func loginForm(
        _ request: Request, email: String?, message: ConsoleMessage?, status: HTTPResponse.Status,
        headers: HTTPFields = [:]
    ) -> Response {
        let formToken = ConsoleFormToken.issue(core.store.masterKeys)
        var fields = headers
        fields[.setCookie] = ConsoleHTTP.setCookie(ConsoleHTTP.formCookie, formToken, maxAge: 3600, request: request)
        let bytes = SignInPage(formToken: formToken, email: email).barePage(message: message)
        return ConsoleHTTP.html(bytes, status: status, headers: fields)
    }

    /// `POST /console/login`
    func logIn(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let form: ConsoleForm
        do {
            form = try await ConsoleHTTP.form(request)
        } catch {
            return failurePage(error, viewer: nil, context: context)
        }
        guard formTokenMatches(request, form) else {
            let failure = ConsoleFailure.csrf
            return loginForm(
                request, email: form["email"], message: .error(failure.code, failure.message), status: failure.status)
        }
        let email = form.value("email") ?? ""
        do {
            let (_, token) = try await accounts.logIn(
                email: email, password: form["password"] ?? "", totpCode: form.value("totp"),
                clientAddress: addresses.key(request, context: context))
            var headers = HTTPFields()
            headers[.setCookie] = ConsoleHTTP.setCookie(
                ConsoleHTTP.sessionCookie, token, maxAge: Int(OperatorAccounts.absoluteSeconds), request: request)
            headers[values: .setCookie].append(
                ConsoleHTTP.setCookie(ConsoleHTTP.formCookie, "", maxAge: 0, request: request))
            return ConsoleHTTP.redirect(ConsoleURL(""), headers: headers)
        } catch let error as ConsoleError {
            let failure = Self.failure(error)
            return loginForm(
                request, email: email, message: .error(failure.code, failure.message), status: failure.status,
                headers: failure.headers)
        } catch {
            return failurePage(error, viewer: nil, context: context)
        }
    }

    // MARK: Enrollment

    /// `GET /console/enroll?token=…`: the operator sets a password and may add TOTP.
    func enrollmentPage(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let token = ConsoleHTTP.query(request)["token"] ?? ""
        guard let account = try await accounts.enrollment(token: token) else {
            return expiredEnrollment()
        }
        return enrollmentForm(request, token: token, account: account, message: nil, status: .ok)
    }

    private func expiredEnrollment() -> Response {
        let failure = Self.failure(.enrollmentExpired)
        return ConsoleHTTP.html(
            ExpiredEnrollmentPage().barePage(message: .error(failure.code, failure.message)), status: failure.status)
    }

    private func enrollmentForm(
        _ request: Request, token: String, account: OperatorRecord, message: ConsoleMessage?,
        status: HTTPResponse.Status
    ) -> Response {
        let formToken = ConsoleFormToken.issue(core.store.masterKeys)
        let secret = TOTP.generateSecret()
        let uri = TOTP(secret: secret).uri(issuer: "Tessera", account: account.email)
        var headers = HTTPFields()
        headers[.setCookie] = ConsoleHTTP.setCookie(ConsoleHTTP.formCookie, formToken, maxAge: 900, request: request)
        let bytes = EnrollmentPage(
            formToken: formToken, token: token, email: account.email, role: account.role,
            secretKey: Base32.encode(secret), uri: uri
        ).barePage(message: message)
        return ConsoleHTTP.html(bytes, status: status, headers: headers)
    }

    /// `POST /console/enroll`
    func enroll(_ request: Request, context: TesseraRequestContext) async throws -> Response {
        let form: ConsoleForm
        do {
            form = try await ConsoleHTTP.form(request)
        } catch {
            return failurePage(error, viewer: nil, context: context)
        }
        let token = form["token"] ?? ""
        guard let account = try await accounts.enrollment(token: token) else { return expiredEnrollment() }
        guard formTokenMatches(request, form) else {
            let failure = ConsoleFailure.csrf
            return enrollmentForm(
                request, token: token, account: account, message: .error(failure.code, failure.message),
                status: failure.status)
        }
        let password = form["password"] ?? ""
        guard password == form["password_confirmation"] else {
            return enrollmentForm(
                request, token: token, account: account,
                message: .error("invalid_request", "The two passwords are not the same."), status: .badRequest)
        }
        var totp: TOTPEnrollment?
        if let code = form.value("totp") {
            guard let secret = form["totp_secret"].flatMap(Base32.decode) else {
                throw CoreError.invalidRequest("The authenticator key is not valid.")
            }
            totp = TOTPEnrollment(secret: secret, code: code)
        }
        do {
            _ = try await accounts.enroll(token: token, password: password, totp: totp)
        } catch let error as ConsoleError {
            let failure = Self.failure(error)
            return enrollmentForm(
                request, token: token, account: account, message: .error(failure.code, failure.message),
                status: failure.status)
        }
        var headers = HTTPFields()
        headers[.setCookie] = ConsoleHTTP.setCookie(ConsoleHTTP.formCookie, "", maxAge: 0, request: request)
        return ConsoleHTTP.redirect(ConsoleURL("login", [("notice", "enrolled")]), headers: headers)
    }

    // MARK: Form pieces

    /// Whether the form's token is one this server issued (its MAC) and the one of the form cookie
    /// this browser was given (double submit).
    func formTokenMatches(_ request: Request, _ form: ConsoleForm) -> Bool {
        guard let expected = ConsoleHTTP.cookie(ConsoleHTTP.formCookie, in: request), let sent = form["csrf"],
            ConsoleFormToken.isIssued(sent, core.store.masterKeys)
        else { return false }
        return OpaqueToken.constantTimeEquals(Array(expected.utf8), Array(sent.utf8))
    }
}
