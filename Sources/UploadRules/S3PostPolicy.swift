import HTTPCore

/// An S3 POST policy document: its expiry and conditions, written as the JSON S3 decodes
/// from the form's `policy` field (standard base64, padded) and signs with SigV4.
public struct S3PostPolicy: Sendable, Equatable {
    /// Unix seconds after which S3 refuses the form.
    public var expiration: Int64
    /// The conditions, in the order they are written.
    public var conditions: [S3PostCondition]

    public init(expiration: Int64, conditions: [S3PostCondition]) {
        self.expiration = expiration
        self.conditions = conditions
    }

    /// `{"expiration":"2015-12-30T12:00:00.000Z","conditions":[…]}`, compact.
    public var json: String {
        "{\"expiration\":\"" + PostPolicyTime.expiration(expiration) + "\",\"conditions\":["
            + conditions.map(\.json).joined(separator: ",") + "]}"
    }

    /// The `policy` form field: standard base64 of `json`, padded.
    public var base64: String { Base64.encoded(Array(json.utf8)) }
}
