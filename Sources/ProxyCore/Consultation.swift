/// What a request check that holds asks outside FormGate, as a typed value: the check that holds puts it
/// in its `CheckAnswer.hold`, the exchange hands it to the shell (`ProxyAction.consultCheck`),
/// and the shell executes it by its case (no cast, no look-up of the route's checks) and
/// reports the answer as a `Verdict`. A new kind of outside service is a new case, which every
/// shell must then handle: nothing held can go unconsulted. (A file's inspection, the rule
/// step's outside service, has its own typed action: `ProxyAction.consultFile`.)
public enum Consultation: Sendable, Equatable {
    /// Ask the auth service of `check` about `request`; the service's answer becomes the
    /// verdict through `check.verdict(for:request:)`.
    case authService(AuthServiceCheck, CheckRequest)
    /// Ask Redis for the route's shared rate limit (`SharedRateLimit`) about `client`, whose
    /// request declared `declaredBytes` (`nil`: unknown). The verdict is `.release` (admitted),
    /// `.refuse` (429, or 503 under `on_error: deny`) or `.decideLocally` (`on_error: local`).
    case sharedLimit(SharedRateLimit, client: ClientKey, declaredBytes: Int64?)
}
