/// The seam every upload-credential provider (Qiniu, S3 SigV4 POST, OSS, COS) stands behind:
/// given what the request and the part are, it returns the fields to inject, in order, at the
/// injection's position. Built once at configuration load; `fields(for:random:)` runs once per
/// injection on the loop thread, so it must not block (signing is a few HMACs).
public protocol TokenProvider: Sendable {
    /// The provider's word for logs and `formgate check` (`qiniu`, `s3_post`, …).
    var kind: String { get }
    /// The names of every field it may inject: a client part of one of these names is dropped
    /// (a client-supplied `policy` or signature never reaches the object store).
    var fieldNames: [String] { get }
    /// Whether the object store reads only the fields before the file (S3, OSS, COS): the
    /// route then refuses a part after the file, or moves it before with `order: fields_first`.
    var needsFileLast: Bool { get }
    /// Whether the store refuses a chunked body (S3 and its kin answer 411): the route should
    /// send an exact Content-Length (`request_body: buffer`); `formgate check` warns otherwise.
    var needsContentLength: Bool { get }
    /// The templates it renders (`formgate check` refuses `{auth:…}` without `auth:`, and
    /// a route's JWT copies the claims they read into the identity).
    var templates: [Template] { get }

    /// The fields for one upload, in the order they go upstream.
    func fields(for context: ProviderContext, random: inout some RandomNumberGenerator) -> [InjectedField]

    /// Whether a client field of this (lower-cased) name is dropped: one of `fieldNames`, or
    /// a field that would steer the store beyond what the policy signs.
    func reserves(_ lowercasedName: String) -> Bool
}

extension TokenProvider {
    /// The names of `fieldNames`, in any case (stores read `Policy` as `policy`).
    public func reserves(_ lowercasedName: String) -> Bool {
        fieldNames.contains { $0.lowercased() == lowercasedName }
    }

    /// The store-control fields of a store whose policy need not cover every field (OSS, COS):
    /// `prefix` fields other than user metadata (`prefix` + `meta-`), and `others`. A client
    /// could set the object's ACL, storage class, encryption, a redirect or a callback URL
    /// with them; FormGate's own (the provider's settings) stay.
    func reservesStoreControl(_ lowercasedName: String, prefix: String, others: Set<String>) -> Bool {
        if lowercasedName.hasPrefix(prefix) { return !lowercasedName.hasPrefix(prefix + "meta-") }
        return others.contains(lowercasedName)
    }
}

/// What a provider knows of the upload it signs for.
public struct ProviderContext: Sendable {
    /// The template values of the part the fields go before (its final `{filename}`, `{ext}`,
    /// the identity), or the request's values for `first`/`last` injections.
    public var values: TemplateValues
    /// The `Content-Type` the part goes upstream with (sniffed, declared or repaired), when
    /// the fields go before a part.
    public var contentType: String?
    /// Unix seconds (the policy's date and expiry).
    public var now: Int64
    /// `limits.file_bytes`: the largest file the route lets through.
    public var maxFileBytes: Int64

    public init(values: TemplateValues, contentType: String? = nil, now: Int64, maxFileBytes: Int64) {
        self.values = values
        self.contentType = contentType
        self.now = now
        self.maxFileBytes = maxFileBytes
    }
}

/// One field a provider injects.
public struct InjectedField: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
