import HTTP1
import MultipartParsing

/// Why a request ended badly, and the status the client gets. This is the one place where
/// errors of the other modules become HTTP status codes.
struct ProxyError: Error {
    enum Kind {
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
    }

    var kind: Kind
    /// What to tell the client and the log (never a secret).
    var detail: String
    /// The `limits:` key that was exceeded, for metrics.
    var limit: String?

    init(_ kind: Kind, detail: String, limit: String? = nil) {
        self.kind = kind
        self.detail = detail
        self.limit = limit
    }

    init(_ error: HTTP1Error) {
        switch error.reason {
        case .headTooLarge:
            self.init(.headTooLarge, detail: "request header section too large", limit: "header_bytes")
        case .unsupportedVersion: self.init(.versionNotSupported, detail: "HTTP version not supported")
        default: self.init(.badRequest, detail: "malformed HTTP: \(error.reason.rawValue)")
        }
    }

    init(_ error: MultipartError) {
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

    var status: Int {
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
        }
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 431: "Request Header Fields Too Large"
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
