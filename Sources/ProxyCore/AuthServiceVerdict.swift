public import HTTP1
import HTTPCore

/// What an auth service decided about a request.
public enum AuthServiceVerdict: Sendable, Equatable {
    /// 2xx: the request may go; `identity` holds the `identity_headers` the answer carried,
    /// in the configured order and spelling (absent ones are left out).
    case allowed(identity: [Header])
    /// 401 or 403: relay `status`, these headers (`WWW-Authenticate`, `Content-Type`) and
    /// `body` (at most `AuthServiceVerdict.maxBodyBytes`) to the client.
    case denied(status: Int, headers: [Header], body: [UInt8])
    /// No usable answer: 503, unless `on_error: allow`.
    case failed(Failure)

    /// The most body bytes read from the service (a longer body fails as `.oversize`).
    public static let maxBodyBytes = 16 * 1024
    /// The most bytes of the service's response head.
    public static let maxHeadBytes = 16 * 1024

    /// A header of the service's answer: an identity attribute, or a field relayed with a
    /// denial.
    public struct Header: Sendable, Equatable {
        public let name: String
        public let value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Why a check failed: a fixed set, usable as a metric's `reason` label (`rawValue`).
    public enum Failure: String, Sendable, CaseIterable {
        /// The connection could not be made (refused, unreachable, no such host, TLS).
        case unreachable
        /// No verdict within the timeout.
        case timeout
        /// A status other than 2xx, 401 and 403 (redirects included).
        case unexpectedStatus = "unexpected_status"
        /// Not HTTP, bad framing, an identity header repeated or holding a control character.
        case malformed
        /// A head or a denial's body over the limits.
        case oversize
        /// The connection closed before the answer was complete.
        case closed
    }

    /// What a complete answer head decides, before any body is read.
    public enum HeadDecision: Sendable, Equatable {
        /// A verdict needs no body: `.allowed` or `.failed`.
        case done(AuthServiceVerdict)
        /// A denial: read the body, then call `denial(status:head:body:)`.
        case readBody
        /// An interim 1xx answer: the final head follows.
        case interim
    }

    /// Judges a response head of the service.
    public static func judge(_ head: ResponseHead, identityHeaders: [String]) -> HeadDecision {
        switch head.status {
        case 101: return .done(.failed(.malformed))
        case 100..<200: return .interim
        case 200..<300: return .done(allowed(head, identityHeaders: identityHeaders))
        case 401, 403: return .readBody
        default: return .done(.failed(.unexpectedStatus))
        }
    }

    /// The verdict of a 401 or 403 answer and its body.
    public static func denial(_ head: ResponseHead, body: [UInt8]) -> AuthServiceVerdict {
        var relayed: [Header] = []
        for field in head.headers {
            let name = field.nameString.lowercased()
            guard name == "www-authenticate" || name == "content-type" else { continue }
            guard isPlainValue(field.value) else { return .failed(.malformed) }
            relayed.append(Header(name: field.nameString, value: field.valueString))
        }
        return .denied(status: head.status, headers: relayed, body: body)
    }

    /// The identity of a 2xx answer: each listed header at most once, with a value free of
    /// CR, LF, NUL and other controls (tab allowed) and valid UTF-8; otherwise `.malformed`
    /// (a repeated identity header is ambiguous).
    private static func allowed(_ head: ResponseHead, identityHeaders: [String]) -> AuthServiceVerdict {
        var identity: [Header] = []
        for name in identityHeaders {
            guard head.headers.count(of: name) <= 1 else { return .failed(.malformed) }
            guard let value = head.headers.first(name) else { continue }
            guard isPlainValue(value), let text = String(validating: value, as: UTF8.self) else {
                return .failed(.malformed)
            }
            identity.append(Header(name: name, value: text))
        }
        return .allowed(identity: identity)
    }

    private static func isPlainValue(_ value: [UInt8]) -> Bool {
        value.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }
}
