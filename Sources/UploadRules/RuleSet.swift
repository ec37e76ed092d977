import HTTPCore
public import Inspection
public import MultipartParsing

/// A route's `multipart:` rules, compiled once at configuration load. Each part meets them in
/// the order DESIGN.md gives: drop (by the client's name), rename, sniff, allow_types (judged
/// after sniffing), filename, inject (fields due before the part), digest (fields after it);
/// `anomalies` is judged by the parser, before a part reaches the rules, and
/// `keep_part_headers` picks the headers the written part head keeps. A client part whose
/// forwarded name is a field FormGate adds (an injected field's, or `<name>.<algorithm>` of a
/// digest) is dropped, whether or not `dropFields` names it.
public struct RuleSet: Sendable {
    /// A step that judges each file's content from outside (`FileInspection`); none by default.
    public var inspection: (any FileInspection)?
    /// `strip_metadata`: image metadata neutralised while the file streams (nil: none).
    public var strip: StripOptions?
    /// `drop_fields`: client field names that are never forwarded (matched before renaming).
    public var dropFields: Set<String> = []
    /// `rename_fields`: original name → forwarded name.
    public var renameFields: [String: String] = [:]
    /// `filename`: the template of every forwarded file name (the sanitizer always runs).
    public var filename: Template?
    /// `inject`: fields FormGate adds.
    public var inject: [Injection] = []
    /// `digest.algorithms`: appended after each file part as `<name>.<algorithm>`.
    public var digests: [DigestAlgorithm] = []
    /// `sniff`: look at the first bytes of each file part.
    public var sniff: SniffRule?
    /// `order: fields_first`: file parts go to the pipeline's `deferred` sink, so the caller
    /// can send every field before the first file (object stores ignore fields after it).
    public var fieldsFirst = false
    /// The upstream gets an exact `Content-Length` whatever the providers, and the file is the
    /// last part (the route of a tus delivery, whose body FormGate writes itself).
    public var requiresContentLength = false
    /// The file must be the last part (an object-store provider is injected): a part after a
    /// file is refused (400 naming it) unless `fieldsFirst` moves the fields before the files.
    public var fileLast: Bool {
        !fieldsFirst
            && (requiresContentLength
                || inject.contains {
                    if case .provider(let provider) = $0.value { return provider.needsFileLast }
                    return false
                })
    }
    /// A provider's store refuses chunked bodies (S3, OSS, COS, Qiniu): the route never sends
    /// one (a `stream` body whose length cannot be declared is spooled, as `buffer` does).
    public var needsContentLength: Bool {
        requiresContentLength
            || inject.contains {
                if case .provider(let provider) = $0.value { return provider.needsContentLength }
                return false
            }
    }
    /// The re-encoded body's length is known once the file's head is written, and a provider's
    /// store needs it: the file is last and FormGate adds nothing after its content (no digest
    /// fields, no field injected `last`). A `stream` route then sends an exact `Content-Length`
    /// for a client body that had one (see `RulePipeline.declareLength`).
    public var lengthFollowsFile: Bool {
        fileLast && digests.isEmpty && !inject.contains { $0.position == .last } && needsContentLength
    }
    /// `allow_types`: `type/subtype` or `type/*` patterns a file part must match (after
    /// sniffing); empty allows everything.
    public var allowTypes: [String] = []
    /// `anomalies` and `keep_part_headers`: the flags that refuse a body, and the part headers
    /// forwarded beside `Content-Disposition` and `Content-Type`. The parser enforces the
    /// first; the pipeline forwards only the kept headers.
    public var policy = MultipartPolicy()

    /// `sniff.content_type`: what to do with the declared type.
    public enum SniffPolicy: String, Sendable {
        /// Forward the sniffed type.
        case override
        /// Forward the declared type (the sniffed one is logged and judged).
        case keep
        /// Refuse (415) a part whose declared type differs from the sniffed one.
        case rejectMismatch = "reject_mismatch"
    }

    /// `sniff: { bytes, content_type }`.
    public struct SniffRule: Sendable {
        public var bytes: Int
        public var policy: SniffPolicy
        public init(bytes: Int, policy: SniffPolicy) {
            self.bytes = bytes
            self.policy = policy
        }
    }

    public init() {}

    /// Whether a client part forwarded under `name` would stand beside a field FormGate adds
    /// (an injection, or a digest field `<file>.<algorithm>`): a backend that keeps the first
    /// or the last value could read the client's. A provider's names match in any case: object
    /// stores read form field names without regard to case (`Policy` is S3's `policy`).
    public func shadowsAddedField(_ name: String) -> Bool {
        var lowered: String?
        for injection in inject {
            switch injection.value {
            case .template: if injection.name == name { return true }
            case .provider(let provider):
                if lowered == nil { lowered = name.lowercased() }
                if provider.reserves(lowered ?? name) { return true }
            }
        }
        // On the UTF-8 bytes: a search by `Character` cost about 2,000 instructions a part.
        let utf8 = name.utf8
        guard !digests.isEmpty, let dot = utf8.lastIndex(of: UInt8(ascii: ".")) else { return false }
        let suffix = utf8[utf8.index(after: dot)...]
        return digests.contains { $0.rawValue.utf8.elementsEqual(suffix) }
    }
}

/// One `inject:` entry.
public struct Injection: Sendable {
    /// Where the field goes.
    public enum Position: Sendable, Equatable {
        case first
        case last
        /// Right before the part with this (forwarded) name.
        case before(String)
    }

    /// What the field holds.
    public enum Value: Sendable {
        /// A template (`value:`, including `{header:NAME}`).
        case template(Template)
        /// Fields from an upload-credential provider (a Qiniu token, an S3 POST policy, …).
        case provider(any TokenProvider)
    }

    public var name: String
    public var position: Position
    public var value: Value

    public init(name: String, position: Position, value: Value) {
        self.name = name
        self.position = position
        self.value = value
    }
}

/// `inject: { qiniu: { access_key, secret_key, scope, ttl, …extra policy fields } }`.
public struct QiniuPolicy: Sendable {
    public var accessKey: String
    public var secretKey: String
    /// The policy scope, e.g. `bucket:{filename}`.
    public var scope: Template
    /// Seconds until the token's deadline.
    public var ttlSeconds: Int64
    /// Extra policy fields in order (`returnBody`, `insertOnly`, `endUser`, …).
    public var extra: [(name: String, value: PolicyValue)]

    public init(
        accessKey: String, secretKey: String, scope: Template, ttlSeconds: Int64,
        extra: [(name: String, value: PolicyValue)]
    ) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.scope = scope
        self.ttlSeconds = ttlSeconds
        self.extra = extra
    }
}

/// One extra policy field's value: a JSON literal written as is (numbers, booleans), or a
/// string template rendered for each request (`endUser: "{auth:sub}"`) and quoted.
public enum PolicyValue: Sendable {
    case literal(String)
    case string(Template)

    /// The value as JSON for one request.
    public func json(_ values: TemplateValues, random: inout some RandomNumberGenerator) -> String {
        switch self {
        case .literal(let json): json
        case .string(let template): jsonString(template.render(values, random: &random))
        }
    }

    /// Whether the value reads the identity.
    public var usesIdentity: Bool {
        if case .string(let template) = self { return template.usesIdentity }
        return false
    }
}

extension RuleSet {
    /// `sniff.content_type: reject_mismatch`: the refusal of file part `part` whose declared
    /// type (its essence) is not the sniffed one; nil when they agree.
    public func typeMismatch(part: String, declared: String?, sniffed: String) -> RuleRefusal? {
        guard declared != sniffed else { return nil }
        return RuleRefusal(
            .typeMismatch,
            description:
                "part \(part): declared type \(declared ?? "none") is not the content's type \(sniffed)")
    }

    /// `allow_types`: the refusal of file part `part` whose type (sniffed, else declared, else
    /// `application/octet-stream`) matches no pattern; nil when it is allowed (or every type is).
    public func typeNotAllowed(part: String, declared: String?, sniffed: String?) -> RuleRefusal? {
        guard !allowTypes.isEmpty else { return nil }
        let judged = sniffed ?? declared ?? "application/octet-stream"
        let type = (try? MediaType.parse(judged)) ?? MediaType(type: "application", subtype: "octet-stream")
        guard !allowTypes.contains(where: { type.matches($0) }) else { return nil }
        return RuleRefusal(.typeNotAllowed, description: "part \(part): type \(judged) is not allowed")
    }
}
