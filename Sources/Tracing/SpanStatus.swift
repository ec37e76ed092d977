/// A span's outcome, as OTLP's `Status`: left unset unless something says otherwise (the HTTP
/// conventions set `error` for a 5xx a SERVER span answered, any 4xx or 5xx a CLIENT span got,
/// and a failure with no response).
public enum SpanStatus: Hashable, Sendable {
    /// Exported without a `status` (OTLP's default, code 0).
    case unset
    /// Code 1: an operator marked it good.
    case ok
    /// Code 2, with a message for people.
    case error(message: String)
}
