/// `inject: { name, qiniu: { … } }`: one field holding a freshly minted Qiniu upload token
/// (`QiniuToken`) for the policy, its scope and string fields rendered for this upload.
public struct QiniuProvider: TokenProvider {
    /// The injected field's name (`token`).
    public var fieldName: String
    public var policy: QiniuPolicy

    public init(fieldName: String, policy: QiniuPolicy) {
        self.fieldName = fieldName
        self.policy = policy
    }

    public var kind: String { "qiniu" }

    public var fieldNames: [String] { [fieldName] }

    /// Qiniu's form upload takes `file` last too (its mock checks it), as the S3 family does.
    public var needsFileLast: Bool { true }

    /// Qiniu's form upload is sent with a Content-Length (its mock refuses chunked bodies).
    public var needsContentLength: Bool { true }

    public var templates: [Template] {
        [policy.scope]
            + policy.extra.compactMap {
                if case .string(let template) = $0.value { return template }
                return nil
            }
    }

    public func fields(for context: ProviderContext, random: inout some RandomNumberGenerator)
        -> [InjectedField]
    {
        let scope = policy.scope.render(context.values, random: &random)
        let json = QiniuToken.policyJSON(
            scope: scope, deadline: context.now + policy.ttlSeconds,
            extra: policy.extra.map { ($0.name, $0.value.json(context.values, random: &random)) })
        let token = QiniuToken.token(
            accessKey: policy.accessKey, secretKey: policy.secretKey, policyJSON: json)
        return [InjectedField(name: fieldName, value: token)]
    }
}
