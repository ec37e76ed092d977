public import HTTP1
public import MultipartParsing
public import UploadRules

/// Why a request ended badly, and the status the client gets. This is the one place where
/// errors of the other modules (and rule refusals, which carry a reason) become HTTP status
/// codes.
public struct ProxyError: Error, Sendable, Equatable {
    /// What went wrong, in the proxy's terms; `status` maps it to an HTTP status.
    public enum Kind: Sendable, Equatable {
        case badRequest
        case headTooLarge
        case versionNotSupported
        case methodNotAllowed
        case notFound
        case lengthRequired
        case payloadTooLarge
        case unsupportedMediaType
        case requestTimeout
        case upstreamUnreachable
        case upstreamBroken
        case upstreamTimeout
        case spoolFailed
        case insufficientStorage
        /// A request-level check refused the request with this status (401, 403, 429, ...).
        case refused(status: Int)
        /// A request-level verdict did not arrive in time (503).
        case verdictTimeout
        /// The client closed the connection before the exchange ended (logged as 499).
        case clientGone
    }

    /// What went wrong.
    public var kind: Kind
    /// What to tell the client and the log (never a secret).
    public var detail: String
    /// The `limits:` key that was exceeded, for metrics.
    public var limit: String?
    /// A request check's refusal: its response fields and relayed body.
    public var refusal: Refusal?

    /// Creates an error of `kind`; `detail` reaches the client and the log.
    public init(_ kind: Kind, detail: String, limit: String? = nil) {
        self.kind = kind
        self.detail = detail
        self.limit = limit
    }

    /// The error for a request check's refusal (`status` 401, 403, 429, ...).
    public init(_ refusal: Refusal) {
        self.init(.refused(status: refusal.status), detail: refusal.reason)
        self.refusal = refusal
    }

    /// The error for a malformed or oversized request head or body framing.
    public init(_ error: HTTP1Error) {
        switch error.reason {
        case .headTooLarge:
            self.init(.headTooLarge, detail: "request header section too large", limit: "header_bytes")
        case .unsupportedVersion: self.init(.versionNotSupported, detail: "HTTP version not supported")
        default: self.init(.badRequest, detail: "malformed HTTP: \(error.reason.rawValue)")
        }
    }

    /// The error for a multipart body the parser refused.
    public init(_ error: MultipartError) {
        if case .limitExceeded(let limit) = error.reason {
            // Part header sizes are malformed input (400); counts and bytes are 413.
            let kind: Kind =
                limit == .partHeaderBytes || limit == .headersPerPart ? .badRequest : .payloadTooLarge
            self.init(kind, detail: "multipart limit exceeded: \(limit.rawValue)", limit: limit.rawValue)
        } else if case .rejectedAnomaly(let flags) = error.reason {
            let names = flags.names.joined(separator: ", ")
            self.init(
                .badRequest,
                detail: "multipart anomaly refused by the route's policy: \(names) at byte \(error.offset)")
        } else {
            self.init(
                .badRequest, detail: "malformed multipart body: \(error.reason) at byte \(error.offset)")
        }
    }

    /// The error for a rule's refusal: 415 for the type rules, 422 for a file an inspection
    /// refused, 503 for an inspection that failed, 413 for a file too large to inspect, 400
    /// for the rest.
    public init(_ refusal: RuleRefusal) {
        switch refusal.reason {
        case .typeNotAllowed, .typeMismatch: self.init(.unsupportedMediaType, detail: refusal.description)
        case .fileRefused, .metadataNotStrippable:
            self.init(.refused(status: 422), detail: refusal.description)
        case .inspectionFailed: self.init(.verdictTimeout, detail: refusal.description)
        case .fileTooLargeToInspect: self.init(.payloadTooLarge, detail: refusal.description)
        case .unsafeFilename, .encoding, .partAfterFile, .bodyAfterFile:
            self.init(.badRequest, detail: refusal.description)
        }
    }

    /// The HTTP status the client gets (and the log records).
    public var status: Int {
        switch kind {
        case .badRequest: 400
        case .headTooLarge: 431
        case .versionNotSupported: 505
        case .methodNotAllowed: 405
        case .notFound: 404
        case .lengthRequired: 411
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .requestTimeout: 408
        case .upstreamUnreachable, .upstreamBroken: 502
        case .upstreamTimeout: 504
        case .spoolFailed: 500
        case .insufficientStorage: 507
        case .refused(let status): status
        case .verdictTimeout: 503
        case .clientGone: 499
        }
    }

    /// The reason phrase written after `status` in a status line.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 423: "Locked"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 460: "Checksum Mismatch"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 507: "Insufficient Storage"
        default: "Status"
        }
    }
}
