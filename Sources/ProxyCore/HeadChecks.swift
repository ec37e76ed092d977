import HTTP1
import HTTPCore

/// What a route refuses in a request head before any body byte is read.
enum HeadChecks {
    /// The multipart type of a request whose body the route rewrites (`nil`: not rewritten),
    /// or the refusal: an unreadable or repeated Content-Type where rules run (400), a method
    /// the route does not allow (405), a Content-Length over `limits.body_bytes` (413).
    ///
    /// `spare`, the connection's last multipart type, lends its storage to this one's.
    static func check(
        _ head: RequestHead, route: Route?, framing: BodyFraming, limits: Limits,
        reusing spare: consuming MediaType?
    ) -> Result<MediaType?, ProxyError> {
        var multipartType: MediaType?
        // The route is read through `route?.`: `if let route` copied the whole route (a dozen
        // references retained and released) on every request.
        if route?.rewritesMultipart == true, let value = head.headers.firstValue("Content-Type") {
            guard
                let type = try? MediaType.parse(value, accepting: .commaSeparatedParameters, reusing: spare),
                head.headers.count(of: "Content-Type") == 1
            else {
                // A Content-Type that cannot be read (or comes twice) could hide a multipart
                // body from the rules while the upstream parses it: refuse it.
                return .failure(ProxyError(.badRequest, detail: "malformed or repeated Content-Type"))
            }
            if type.isMultipartFormData { multipartType = type }
        }
        if let methods = route?.methods, !methods.isEmpty, !methods.contains(head.method) {
            return .failure(
                ProxyError(
                    .methodNotAllowed,
                    detail: "method \(head.method) not allowed on route \(route?.name ?? "")"))
        }
        if case .length(let length) = framing, length > limits.bodyBytes {
            return .failure(
                ProxyError(
                    .payloadTooLarge, detail: "body larger than limits.body_bytes", limit: "body_bytes"))
        }
        return .success(multipartType)
    }
}
