extension JWTVerifier {
    /// Checks the registered claims and the required ones; returns `sub`.
    ///
    /// A registered claim of the wrong type is `malformed`: `exp`, `nbf`, `iat` must be
    /// numbers, `iss` and `sub` strings, `aud` a string or an array of strings.
    func checkClaims(_ claims: JSONObject, now: Int64) throws(JWTRejection) -> String? {
        var subject: String?
        var issuer: String?
        var audience: JSONValue?
        var expiration: Int64?
        var notBefore: Int64?
        var issuedAt: Int64?
        for member in claims.members {
            switch ClaimName(member.name) {
            case .exp: expiration = try Self.numericDate(member.value)
            case .nbf: notBefore = try Self.numericDate(member.value)
            case .iat: issuedAt = try Self.numericDate(member.value)
            case .iss:
                guard let text = member.value.stringValue else { throw .malformed }
                issuer = text
            case .sub:
                guard let text = member.value.stringValue else { throw .malformed }
                subject = text
            case .aud: audience = member.value
            default: continue
            }
        }
        // Valid while now < exp + leeway (RFC 7519 section 4.1.4), and from nbf - leeway on
        // (4.1.5); an iat later than now + leeway is a clock or a forgery, refused alike.
        let (latest, overflow) = now.addingReportingOverflow(settings.leeway)
        let horizon = overflow ? Int64.max : latest
        if let expiration {
            let (deadline, overflow) = expiration.addingReportingOverflow(settings.leeway)
            if !overflow, now >= deadline { throw .expired }
        } else if settings.requiresExpiration {
            throw .missingClaim
        }
        if let notBefore, notBefore > horizon { throw .notYetValid }
        if let issuedAt, issuedAt > horizon { throw .notYetValid }
        if let required = settings.issuer {
            guard let issuer else { throw .missingClaim }
            guard issuer == required else { throw .wrongIssuer }
        }
        try checkAudience(audience)
        for name in settings.requiredClaims {
            guard let value = claims[name], value != .null else { throw .missingClaim }
        }
        return subject
    }

    private func checkAudience(_ audience: JSONValue?) throws(JWTRejection) {
        var named = false
        switch audience {
        case nil: break
        case .string(let name)?: named = settings.audiences.contains(name)
        case .array(let elements)?:
            for element in elements {
                guard case .string(let name) = element else { throw .malformed }
                if settings.audiences.contains(name) { named = true }
            }
        default: throw .malformed
        }
        guard !settings.audiences.isEmpty else { return }
        guard audience != nil else { throw .missingClaim }
        guard named else { throw .wrongAudience }
    }

    /// A NumericDate (RFC 7519 section 2): a JSON number of seconds, fractions floored.
    private static func numericDate(_ value: JSONValue) throws(JWTRejection) -> Int64 {
        guard let date = value.numberValue?.numericDate else { throw .malformed }
        return date
    }
}
