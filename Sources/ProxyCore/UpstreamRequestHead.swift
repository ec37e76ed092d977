public import HTTP1
public import HTTPCore
public import TraceContext
public import UploadRules

/// The request head as the upstream gets it: hop-by-hop fields and the client's framing
/// removed, forwarding fields added, the route's header rules applied, framing set by the
/// proxy, `Host` naming the upstream. Serialized by `RequestHead.serialize(into:)`.
public enum UpstreamRequestHead {
    /// How the body is framed upstream.
    public enum Framing: Sendable, Equatable {
        /// `Transfer-Encoding: chunked`.
        case chunked
        /// `Content-Length`.
        case length(Int64)
        /// No body: `Content-Length: 0` only when the client sent a Content-Length.
        case none
    }

    static let contentTypeName = Array("Content-Type".utf8)
    static let multipartPrefix = Array("multipart/form-data; boundary=".utf8)
    static let forwardedForName = Array("X-Forwarded-For".utf8)
    static let forwardedProtoName = Array("X-Forwarded-Proto".utf8)
    static let forwardedHostName = Array("X-Forwarded-Host".utf8)
    static let requestIDName = Array("X-Request-Id".utf8)
    static let traceParentName = Array("traceparent".utf8)
    static let hostName = Array("Host".utf8)
    static let http = Array("http".utf8)
    static let https = Array("https".utf8)
    static let listSeparator: [UInt8] = [UInt8(ascii: ","), 0x20]

    /// Request fields FormGate sets itself (or drops: Expect is answered here).
    static let replacedRequestFields = ["Content-Length", "Expect", "Host", "X-Forwarded-Host"].map {
        Array($0.utf8)
    }

    /// The head for `request` sent to `target`.
    ///
    /// - Parameters:
    ///   - boundary: the new boundary when the body is re-encoded as multipart.
    ///   - client: the client's numeric address (appended to `X-Forwarded-For`).
    ///   - secure: whether the client came over TLS (`X-Forwarded-Proto: https`).
    ///   - identity: who the route's `auth:` says sent it: the client's own identity fields
    ///     never go upstream; the route may set them (and `headers.set` values) from this.
    ///   - spare: buffers the head is built in (their fields are replaced): a connection's kept
    ///     ones (`ActionBuffer.takeSpare(.upstreamRequest)`) have room from the requests before.
    public static func make(
        _ request: RequestHead, target: UpstreamURL, route: Route?, requestID: String, boundary: [UInt8]?,
        client: [UInt8], framing: Framing, secure: Bool = false, identity: Identity? = nil,
        traceParent: TraceParent? = nil, reusing spare: consuming HeaderFields = HeaderFields()
    ) -> RequestHead {
        let originalHost = request.headers.firstValue("Host")
        let earlier = request.headers.firstValue("X-Forwarded-For")
        // One copy of the request's fields, with room for what is added (growing the two
        // buffers field by field, and copying them again to put Host first, cost allocations).
        var headers = consume spare
        headers.replace(
            with: request.headers, extraFields: 8 + (route?.setHeaders.count ?? 0),
            extraBytes: 256 + target.authorityBytes.count + (boundary?.count ?? 0) + (earlier?.count ?? 0)
                + client.count + (originalHost?.count ?? 0) + requestID.utf8.count)
        // One pass: the hop-by-hop fields, those `Connection` names, and those set here.
        headers.removeHopByHop(alsoRemoving: replacedRequestFields)
        if let boundary {
            headers.set(name: contentTypeName, value: multipartPrefix + boundary)
        }
        setForwardedFor(&headers, earlier: earlier, client: client)
        headers.set(name: forwardedProtoName, value: secure ? https : http)
        if let originalHost {
            headers.append(name: forwardedHostName, value: originalHost)
        }
        headers.set(name: requestIDName, value: requestID.utf8)
        if let traceParent {
            // The upstream's parent is this request's CLIENT span, not the client's.
            var value: [UInt8] = []
            value.reserveCapacity(55)
            traceParent.appendHeaderValue(to: &value)
            headers.set(name: traceParentName, value: value)
        }
        // Through `route?.`: `if let route` copied the whole route per request.
        for name in route?.removeHeaders ?? [] { headers.removeAll(named: name) }
        for (name, value) in route?.setHeaders ?? [] { headers.set(name: name, value: value) }
        if let auth = route?.authForwarding { auth.apply(to: &headers, identity: identity) }
        switch framing {
        case .chunked:
            headers.append(name: "Transfer-Encoding", value: "chunked")
        case .length(let length):
            headers.append(name: "Content-Length", value: String(length))
        case .none:
            if request.headers.contains("Content-Length") {
                headers.append(name: "Content-Length", value: "0")
            }
        }
        // Host first, then the fields in order.
        headers.prepend(name: hostName, value: target.authorityBytes)
        return RequestHead(method: request.method, target: request.target, version: .http11, headers: headers)
    }

    /// `X-Forwarded-For`: the client's address after the list the request brought, if any.
    static func setForwardedFor(_ headers: inout HeaderFields, earlier: ArraySlice<UInt8>?, client: [UInt8]) {
        guard let earlier else { return headers.set(name: forwardedForName, value: client) }
        var forwarded: [UInt8] = []
        forwarded.reserveCapacity(earlier.count + 2 + client.count)
        forwarded.append(contentsOf: earlier)
        forwarded.append(contentsOf: listSeparator)
        forwarded.append(contentsOf: client)
        headers.set(name: forwardedForName, value: forwarded)
    }
}
