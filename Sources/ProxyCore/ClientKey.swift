/// Whose limits a request counts against: the authenticated identity's name, else the
/// client's numeric address. The two never collide (an identity named like an address is
/// still a different key).
public enum ClientKey: Hashable, Sendable {
    /// The identity's name (a JWT subject, an API key's name, an auth service's user).
    case identity(String)
    /// The client's numeric address as its text bytes (`Exchange.client`), e.g. `192.0.2.7`.
    case address([UInt8])
}
