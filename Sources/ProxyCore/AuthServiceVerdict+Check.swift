public import UploadRules

extension AuthServiceVerdict {
    /// The request check's verdict for this answer (what the shell reports for a held
    /// `auth: { request: ... }` check).
    ///
    /// - `.allowed`: released as an identity (`Identity.Method.request`) whose subject is the
    ///   `subjectHeader` (default: the first of `identity_headers`) and whose attributes are
    ///   all of them (lower-cased names).
    ///   Without the subject header the request is released without an identity (limits then
    ///   count it under the client's address, never under an empty subject).
    /// - `.denied`: refused with the service's status, its `WWW-Authenticate` fields and its
    ///   body (with its `Content-Type`).
    /// - `.failed`: refused with 503, or with `on_error: allow` released without an identity;
    ///   either way tallied as an `error` with the failure's reason.
    public func checkVerdict(settings: AuthServiceSettings, subjectHeader: String? = nil) -> Verdict {
        switch self {
        case .allowed(let headers):
            return .release(
                Self.identity(headers, settings: settings, subjectHeader: subjectHeader),
                tally: .auth(.allowed, reason: "request"))
        case .denied(let status, let headers, let body):
            let fields = headers.filter { $0.name.lowercased() == "www-authenticate" }.map {
                Refusal.Field($0.name, $0.value)
            }
            let contentType = headers.first { $0.name.lowercased() == "content-type" }?.value
            return .refuse(
                Refusal(
                    status: status, reason: "refused by the auth service", fields: fields,
                    body: .init(contentType: contentType, bytes: body),
                    tally: .auth(.denied, reason: status == 401 ? "unauthenticated" : "forbidden")))
        case .failed(let failure):
            let tally = CheckTally.auth(.error, reason: failure.rawValue)
            if settings.onError == .allow { return .release(nil, tally: tally) }
            return .refuse(Refusal(status: 503, reason: "the auth service is unavailable", tally: tally))
        }
    }

    /// The identity of an allowing answer's headers, `nil` without the subject header (limits
    /// then count the request under the client's address, never under an empty subject).
    public static func identity(
        _ headers: [Header], settings: AuthServiceSettings, subjectHeader: String? = nil
    ) -> Identity? {
        guard let subjectName = (subjectHeader ?? settings.identityHeaders.first)?.lowercased(),
            let subject = headers.first(where: { $0.name.lowercased() == subjectName })
        else { return nil }
        var attributes: [String: String] = [:]
        for header in headers { attributes[header.name.lowercased()] = header.value }
        return Identity(subject: subject.value, method: .request, attributes: attributes)
    }
}
