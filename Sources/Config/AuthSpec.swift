/// A route's `auth:` as written, before its keys and files are loaded into a request check.
enum AuthSpec {
    case jwt(JWTSpec)
    case request(AuthServiceSpec)
    case apiKeys(APIKeysSpec)

    /// The method's word, for `Route.authMethod`.
    var method: String {
        switch self {
        case .jwt: "jwt"
        case .request: "request"
        case .apiKeys: "api_keys"
        }
    }
}

/// Where a route reads the client's token (`token_from:`).
enum TokenFromSpec: Equatable {
    /// `Authorization: Bearer TOKEN` (the default).
    case bearer
    case header(String)
    case cookie(String)
    case query(String)
}

/// `auth: { jwt: { … } }`.
struct JWTSpec {
    var jwksFile: String?
    var secret: String?
    var issuer: String?
    var audience: [String] = []
    /// Seconds of clock skew allowed for `exp`, `nbf` and `iat`.
    var leewaySeconds: Int64 = 30
    var tokenFrom = TokenFromSpec.bearer
    var requiredClaims: [String] = []
    var maxTokenBytes = 8192
    /// Whether `exp` must be present.
    var requireExp = true
    /// Whether the token's field goes upstream (default: removed).
    var forwardToken = false
}

/// `auth: { request: { … } }`.
struct AuthServiceSpec {
    var url: String
    var timeoutMilliseconds: Int64 = 5_000
    var identityHeaders: [String] = []
    var forwardHeaders = ["Authorization", "Cookie"]
    var cacheTTLMilliseconds: Int64 = 0
    var allowOnError = false
    /// The identity header whose value is the subject (default: the first identity header).
    var subjectHeader: String?
    /// Whether the identity headers go upstream with the service's values (default true).
    var forwardIdentity = true
}

/// `auth: { api_keys: FILE }` or `{ api_keys: { file, header } }`.
struct APIKeysSpec {
    var file: String
    var header = "X-Api-Key"
    /// Whether the key's field goes upstream (default: removed).
    var forwardKey = false
}

/// `rate_limit: { requests_per_second, burst, bytes_per_minute, concurrent }`, per client.
struct RateLimitSpec {
    var requestsPerSecond: Double?
    var burst: Int?
    var bytesPerMinute: Int64?
    var concurrent: Int?
    /// `shared: true`: decided in Redis across replicas.
    var shared = false
}
