public import ClientAuth
import HTTP1
import UploadRules

/// `auth: { api_keys: … }`: the key in the route's header must be one of the file's; the
/// identity is the key's name. Refusals are 401 with `WWW-Authenticate: ApiKey header="NAME"`
/// and never say whether a key exists.
public struct APIKeyCheck: RequestCheck {
    let keys: APIKeySet

    public init(keys: APIKeySet) {
        self.keys = keys
    }

    public func check(_ request: CheckRequest) -> CheckAnswer {
        switch keys.identify(request.head) {
        case .success(let name):
            return .identified(Identity(subject: name, method: .apiKey))
        case .failure(let rejection):
            let what = rejection == .missing ? "a key is required in \(keys.header)" : "the key is not valid"
            return .refuse(
                Refusal(
                    status: 401, reason: "auth: api_keys: \(what)",
                    fields: [.init("WWW-Authenticate", "ApiKey header=\"\(keys.header)\"")],
                    tally: .auth(.denied, reason: rejection.rawValue)))
        }
    }
}
