import HTTPCore

/// One condition of an S3 POST policy (AWS: "Creating a POST Policy", condition matching).
public enum S3PostCondition: Sendable, Equatable {
    /// `{"field": "value"}`: the form field must equal `value`.
    case exact(field: String, value: String)
    /// `["starts-with", "$field", "prefix"]`: the form field must begin with `prefix` (an empty
    /// prefix allows any value but still names the field as allowed).
    case startsWith(field: String, prefix: String)
    /// `["content-length-range", min, max]`: the file's size in bytes, both ends included.
    case contentLengthRange(min: Int64, max: Int64)

    /// The condition as compact JSON.
    public var json: String {
        switch self {
        case .exact(let field, let value):
            "{" + jsonString(field) + ":" + jsonString(value) + "}"
        case .startsWith(let field, let prefix):
            "[\"starts-with\"," + jsonString("$" + field) + "," + jsonString(prefix) + "]"
        case .contentLengthRange(let min, let max):
            "[\"content-length-range\",\(min),\(max)]"
        }
    }

    /// The form field the condition constrains (`content-length-range` for the size).
    public var field: String {
        switch self {
        case .exact(let field, _), .startsWith(let field, _): field
        case .contentLengthRange: "content-length-range"
        }
    }
}
