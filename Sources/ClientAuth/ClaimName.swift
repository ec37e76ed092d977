/// The registered names the verifier acts on, recognised from a member name's bytes without
/// a `String` comparison per candidate (every JOSE header and claims set has a few of them).
enum ClaimName {
    case alg, kid, typ, crit
    case exp, nbf, iat, iss, sub, aud

    /// The name `text` stands for, or `nil` for any other name.
    init?(_ text: String) {
        var utf8 = text.utf8.makeIterator()
        var key: UInt32 = 0
        for length in 0..<5 {
            guard let byte = utf8.next() else {
                guard length >= 3 else { return nil }
                break
            }
            guard length < 4 else { return nil }
            key = key << 8 | UInt32(byte)
        }
        switch key {
        case 0x61_6C_67: self = .alg
        case 0x6B_69_64: self = .kid
        case 0x74_79_70: self = .typ
        case 0x63_72_69_74: self = .crit
        case 0x65_78_70: self = .exp
        case 0x6E_62_66: self = .nbf
        case 0x69_61_74: self = .iat
        case 0x69_73_73: self = .iss
        case 0x73_75_62: self = .sub
        case 0x61_75_64: self = .aud
        default: return nil
        }
    }
}
